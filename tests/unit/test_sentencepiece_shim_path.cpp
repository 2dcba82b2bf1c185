// Where the run-time modules (the sentencepiece shim, the libtorch plugin) are looked for:
// relative to the library or executable holding the code (installed trees work wherever they
// are), the build tree only for callers inside it, and $MCPCLASS_SPM_SHIM / $MCPCLASS_TORCH_PLUGIN
// as the one override, reported by name when it is wrong.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "learned/torch_plugin.hpp"
#include "mcpclass/classify/errors.hpp"
#include "test_learned_support.hpp"
#include "tokenizers/sentencepiece_shim_path.hpp"
#include "tokenizers/tokenizer_sentencepiece.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace mcpclass::learned;
using namespace mcpclass::tokenizers;
using mcpclass::classify::ClassifyError;

namespace {

ModuleSearch search_from(
    const std::string& caller,
    const std::string& file_name = mcpclass::tokenizers::kSentencePieceShimName) {
  ModuleSearch s;
  s.file_name = file_name;
  s.what = "the module";
  s.override_variable = "MCPCLASS_TEST_MODULE";
  s.caller_path = caller;
  s.build_dir = "/work/build";
  s.build_module = "/work/build/" + file_name;
  s.bin_to_module_dir = "../lib/mcpclass";
  s.installed_module = "/usr/local/lib/mcpclass/" + file_name;
  return s;
}

std::vector<std::string> shim_candidates(const ModuleSearch& s) {
  return mcpclass::tokenizers::module_candidates(s);
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

TEST_CASE("shim path: this test binary finds the real modules through its own location") {
  for (const auto module : {mcpclass::tokenizers::RuntimeModule::sentencepiece_shim,
                            mcpclass::tokenizers::RuntimeModule::torch_plugin}) {
    const auto s = mcpclass::tokenizers::current_module_search(module);
    CAPTURE(s.file_name);
    CHECK(std::filesystem::equivalent(s.caller_path, "/proc/self/exe"));
    const auto c = shim_candidates(s);
    CHECK(std::any_of(c.begin(), c.end(),
                      [](const std::string& p) { return std::filesystem::exists(p); }));
  }
}

TEST_CASE("shim path: the libtorch plugin is looked for like the shim, under its own name") {
  const auto c = shim_candidates(
      search_from("/opt/x/lib/libmcpclass.so.1", mcpclass::tokenizers::kTorchPluginName));
  REQUIRE(!c.empty());
  CHECK(c.front() == "/opt/x/lib/mcpclass/libmcpclass_torch.so");
  CHECK(c.back() == "/usr/local/lib/mcpclass/libmcpclass_torch.so");
  // The plugin's own copy of the library finds the shim installed next to it.
  const auto shim = shim_candidates(search_from("/opt/x/lib/mcpclass/libmcpclass_torch.so"));
  CHECK(has(shim, "/opt/x/lib/mcpclass/libmcpclass_spm.so"));
  const auto search = mcpclass::tokenizers::current_module_search(
      mcpclass::tokenizers::RuntimeModule::torch_plugin);
  CHECK(search.override_variable == "MCPCLASS_TORCH_PLUGIN");
}

TEST_CASE("shim path: a missing or broken libtorch plugin fails naming the path and the reason") {
  auto s = search_from("/opt/x/lib/libmcpclass.so", mcpclass::tokenizers::kTorchPluginName);
  s.override_variable = "MCPCLASS_TORCH_PLUGIN";
  s.override_path = "/nonexistent/libmcpclass_torch.so";
  CHECK_THROWS_WITH_AS(detail::load_torch_plugin(s),
                       doctest::Contains("/nonexistent/libmcpclass_torch.so (missing)"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(detail::load_torch_plugin(s), doctest::Contains("MCPCLASS_TORCH_PLUGIN"),
                       ClassifyError);
  // Not a shared library: the loader's reason.
  const auto dir = learned_test::temp_dir("plugin-broken");
  s.override_path = dir + "/libmcpclass_torch.so";
  std::ofstream(s.override_path) << std::string(256, 'x');
  const std::string not_elf = s.override_path + ": invalid ELF header";
  CHECK_THROWS_WITH_AS(detail::load_torch_plugin(s), doctest::Contains(not_elf.c_str()),
                       ClassifyError);
  // A library without the entry point.
  s.override_path = MCPCLASS_BINARY_DIR "/libmcpclass_spm.so";
  CHECK_THROWS_WITH_AS(detail::load_torch_plugin(s),
                       doctest::Contains("lacks the entry point mcpclass_torch_plugin_v1"),
                       ClassifyError);
  // The real one.
  s.override_path = MCPCLASS_BINARY_DIR "/libmcpclass_torch.so";
  CHECK(detail::load_torch_plugin(s).version == detail::kTorchPluginVersion);
  std::filesystem::remove_all(dir);
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

#endif  // MCPCLASS_WITH_LEARNED
