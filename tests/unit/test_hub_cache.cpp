// The Hugging Face cache layout (hub_cache.hpp) that `mcpclass model pull` fills and
// `model: hf://ORG/NAME` reads: repository ids, the cache directory's environment variables in
// huggingface_hub's order, and snapshots found by commit or by ref.
#include "mcpclass/learned/hub_cache.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
namespace fs = std::filesystem;

namespace {

// Sets (or, with nullopt, unsets) an environment variable for the scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("hub cache: repository ids and revisions") {
  const auto r = parse_hub_repo("protectai/deberta-v3-base-prompt-injection-v2");
  CHECK(r.id == "protectai/deberta-v3-base-prompt-injection-v2");
  CHECK(r.revision == "main");
  CHECK(parse_hub_repo("llm-semantic-router/mmbert-embed-32k-2d-matryoshka@v1.0").revision ==
        "v1.0");
  for (const char* bad :
       {"", "noslash", "a/b/c", "/b", "a/", "a/..", "a/b@", "a/b@../x", "a b/c", "a/.hidden"})
    CHECK_THROWS_AS(parse_hub_repo(bad), ClassifyError);
  CHECK(is_commit_hash(std::string(40, 'a')));
  CHECK_FALSE(is_commit_hash(std::string(40, 'A')));
  CHECK_FALSE(is_commit_hash("main"));
  CHECK(hub_repo_dir("/c", "org/name") == "/c/models--org--name");
}

TEST_CASE("hub cache: HF_HUB_CACHE, then HF_HOME/hub, then XDG_CACHE_HOME, then ~/.cache") {
  const ScopedEnv home("HOME", "/home/u");
  {
    const ScopedEnv a("HF_HUB_CACHE", "/hub"), b("HF_HOME", "/hf"), c("XDG_CACHE_HOME", "/x");
    CHECK(hub_cache_dir() == "/hub");
  }
  {
    const ScopedEnv a("HF_HUB_CACHE", std::nullopt), b("HF_HOME", "/hf"), c("XDG_CACHE_HOME", "/x");
    CHECK(hub_cache_dir() == "/hf/hub");
  }
  {
    const ScopedEnv a("HF_HUB_CACHE", std::nullopt), b("HF_HOME", std::nullopt),
        c("XDG_CACHE_HOME", "/x");
    CHECK(hub_cache_dir() == "/x/huggingface/hub");
  }
  const ScopedEnv a("HF_HUB_CACHE", std::nullopt), b("HF_HOME", std::nullopt),
      c("XDG_CACHE_HOME", std::nullopt);
  CHECK(hub_cache_dir() == "/home/u/.cache/huggingface/hub");
}

TEST_CASE("hub cache: a snapshot by ref or commit, hf:// through resolve_model_path") {
  const fs::path cache = fs::temp_directory_path() / ("mcpclass-hub-" + std::to_string(::getpid()));
  const std::string commit(40, 'c');
  const fs::path repo = cache / "models--org--name";
  fs::create_directories(repo / "snapshots" / commit);
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << commit;
  CHECK(hub_snapshot(cache.string(), {"org/name", "main"}) ==
        (repo / "snapshots" / commit).string());
  CHECK(hub_snapshot(cache.string(), {"org/name", commit}) ==
        (repo / "snapshots" / commit).string());
  CHECK_FALSE(hub_snapshot(cache.string(), {"org/name", "v2"}));
  CHECK_FALSE(hub_snapshot(cache.string(), {"org/other", "main"}));
  const ScopedEnv env("HF_HUB_CACHE", cache.string());
  CHECK(resolve_model_path("hf://org/name") == (repo / "snapshots" / commit).string());
  CHECK_THROWS_WITH_AS(resolve_model_path("hf://org/name@v2"),
                       doctest::Contains("run `mcpclass model pull org/name@v2` first"),
                       ClassifyError);
  fs::remove_all(cache);
}
