// Where the sentencepiece shim is looked for: relative to the library or executable holding the
// code (installed trees work wherever they are), the build tree only for modules inside it, and
// $MCPCLASS_SPM_SHIM as the one override, reported by name when it is wrong.
#include "mcpclass/classify/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_TORCH

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/tokenizer_sentencepiece.hpp"
#include "test_learned_support.hpp"
#include "torch/sentencepiece_shim_path.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace mcpclass::classify;
using detail::shim_candidates;
using detail::ShimSearch;

namespace {

ShimSearch search_from(const std::string& module) {
  ShimSearch s;
  s.module_path = module;
  s.build_dir = "/work/build";
  s.build_shim = "/work/build/libmcpclass_spm.so";
  s.bin_to_shim_dir = "../lib/mcpclass";
  s.installed_shim = "/usr/local/lib/mcpclass/libmcpclass_spm.so";
  return s;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Restores the variable when the test ends, whatever happened.
struct ScopedEnv {
  explicit ScopedEnv(const char* value) { ::setenv("MCPCLASS_SPM_SHIM", value, 1); }
  ~ScopedEnv() { ::unsetenv("MCPCLASS_SPM_SHIM"); }
};

}  // namespace

TEST_CASE("shim path: an installed libmcpclass.so looks in <libdir>/mcpclass first") {
  const auto c = shim_candidates(search_from("/opt/x/lib/libmcpclass.so.1"));
  REQUIRE(!c.empty());
  CHECK(c.front() == "/opt/x/lib/mcpclass/libmcpclass_spm.so");
  CHECK(has(c, "/opt/x/lib/libmcpclass_spm.so"));
  CHECK(c.back() == "/usr/local/lib/mcpclass/libmcpclass_spm.so");
  CHECK_FALSE(has(c, "/work/build/libmcpclass_spm.so"));  // never the build tree from outside
}

TEST_CASE("shim path: an installed executable looks in ../lib/mcpclass") {
  const auto c = shim_candidates(search_from("/opt/x/bin/mcpclass"));
  CHECK(has(c, "/opt/x/lib/mcpclass/libmcpclass_spm.so"));
  CHECK_FALSE(has(c, "/work/build/libmcpclass_spm.so"));
}

TEST_CASE("shim path: modules inside the build tree fall back to the build tree's shim") {
  const auto c = shim_candidates(search_from("/work/build/capi/libmcpclass.so"));
  CHECK(has(c, "/work/build/libmcpclass_spm.so"));
  CHECK_FALSE(has(c, "/usr/local/lib/mcpclass/libmcpclass_spm.so"));
  // A sibling folder whose name merely starts like the build tree is outside it.
  const auto sibling = shim_candidates(search_from("/work/build-asan/capi/libmcpclass.so"));
  CHECK_FALSE(has(sibling, "/work/build/libmcpclass_spm.so"));
}

TEST_CASE("shim path: MCPCLASS_SPM_SHIM is the only candidate when set") {
  auto s = search_from("/opt/x/lib/libmcpclass.so");
  s.override_path = "/somewhere/shim.so";
  CHECK(shim_candidates(s) == std::vector<std::string>{"/somewhere/shim.so"});
}

TEST_CASE("shim path: this test binary finds the real shim through its own location") {
  const auto s = detail::current_shim_search();
  CHECK(std::filesystem::equivalent(s.module_path, "/proc/self/exe"));
  const auto c = shim_candidates(s);
  CHECK(std::any_of(c.begin(), c.end(),
                    [](const std::string& p) { return std::filesystem::exists(p); }));
}

TEST_CASE("shim path: a wrong MCPCLASS_SPM_SHIM fails naming the path and the variable") {
  const auto model = learned_test::model_dir() + "/tokenizer.model";
  ScopedEnv env("/nonexistent/libmcpclass_spm.so");
  try {
    SentencePieceTokenizer tokenizer(model);
    FAIL("the tokenizer loaded without a shim");
  } catch (const ClassifyError& e) {
    const std::string message = e.what();
    CHECK(message.find("/nonexistent/libmcpclass_spm.so (missing)") != std::string::npos);
    CHECK(message.find("MCPCLASS_SPM_SHIM") != std::string::npos);
  }
}

#endif  // MCPCLASS_WITH_TORCH
