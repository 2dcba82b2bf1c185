#include "mcpclass/learned/hub_cache.hpp"

#include "mcpclass/classify/errors.hpp"
#include "util/env_value.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mcpclass::learned {

namespace fs = std::filesystem;

namespace {

// The Hub's repo names: letters, digits, '-', '_', '.' (not leading or trailing '.'/'-').
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 96 || s.front() == '.' || s.front() == '-' || s.back() == '.')
    return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return s.find("..") == std::string_view::npos;
}

}  // namespace

bool is_commit_hash(std::string_view text) {
  if (text.size() != 40) return false;
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

HubRepo parse_hub_repo(std::string_view text) {
  HubRepo r;
  std::string_view id = text;
  if (const auto at = text.find('@'); at != std::string_view::npos) {
    id = text.substr(0, at);
    r.revision = std::string(text.substr(at + 1));
    if (r.revision.empty() || r.revision.find("..") != std::string::npos ||
        r.revision.find_first_of(" \t\n\\") != std::string::npos || r.revision.front() == '/')
      throw classify::ClassifyError(
          "'" + std::string(text) +
          "': the revision after '@' must be a branch, a tag or a commit");
  }
  const auto slash = id.find('/');
  if (slash == std::string_view::npos || !valid_name(id.substr(0, slash)) ||
      !valid_name(id.substr(slash + 1)))
    throw classify::ClassifyError("'" + std::string(text) +
                                  "' is not a Hub model id: ORG/NAME[@REVISION] (letters, digits, "
                                  "'-', '_' and '.')");
  r.id = std::string(id);
  return r;
}

std::string hub_cache_dir() {
  if (auto dir = util::env_value("HF_HUB_CACHE"); !dir.empty()) return dir;
  if (auto home = util::env_value("HF_HOME"); !home.empty()) return home + "/hub";
  if (auto xdg = util::env_value("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/huggingface/hub";
  if (auto home = util::env_value("HOME"); !home.empty()) return home + "/.cache/huggingface/hub";
  return ".cache/huggingface/hub";
}

std::string hub_repo_dir(const std::string& cache, const std::string& repo_id) {
  std::string name = "models--" + repo_id;
  if (const auto slash = name.find('/'); slash != std::string::npos) name.replace(slash, 1, "--");
  return (fs::path(cache) / name).string();
}

std::optional<std::string> hub_snapshot(const std::string& cache, const HubRepo& repo) {
  const fs::path dir(hub_repo_dir(cache, repo.id));
  std::string commit = repo.revision;
  if (!is_commit_hash(commit)) {
    std::ifstream ref(dir / "refs" / repo.revision);
    if (!ref || !std::getline(ref, commit) || !is_commit_hash(commit)) return std::nullopt;
  }
  const auto snapshot = dir / "snapshots" / commit;
  std::error_code ec;
  if (!fs::is_directory(snapshot, ec)) return std::nullopt;
  return snapshot.string();
}

}  // namespace mcpclass::learned
