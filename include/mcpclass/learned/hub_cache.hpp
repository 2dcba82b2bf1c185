// The Hugging Face Hub's local cache, in the layout huggingface_hub writes
// (`file_download.py`), so that Python tools and mcpclass share downloads:
// <cache>/models--ORG--NAME/{blobs/<etag>, snapshots/<commit>/<path> → ../../blobs/<etag>,
// refs/<revision> holding the commit}. `mcpclass model pull` fills it; a configuration's
// `model: hf://ORG/NAME[@REVISION]` is read from it (resolve_model_path), never downloaded then.
// Thread-safety: pure functions over the environment and the file system.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::learned {

/// A Hub model repository and the revision wanted (a branch, a tag or a 40-hex commit).
struct HubRepo {
  std::string id;  ///< "ORG/NAME"
  std::string revision = "main";
};

/// "ORG/NAME" or "ORG/NAME@REVISION". Throws ClassifyError naming the text for anything else
/// (an empty part, more than one '/', characters the Hub does not allow in ids).
HubRepo parse_hub_repo(std::string_view text);

/// HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
/// ~/.cache/huggingface/hub, as huggingface_hub's constants.py resolves it.
std::string hub_cache_dir();

/// <cache>/models--ORG--NAME.
std::string hub_repo_dir(const std::string& cache, const std::string& repo_id);

/// The snapshot directory of `repo` in `cache`: snapshots/<revision> for a commit, else the
/// commit refs/<revision> names; nothing when the cache does not hold it.
std::optional<std::string> hub_snapshot(const std::string& cache, const HubRepo& repo);

/// Whether `text` is 40 lower-case hex digits (a commit).
bool is_commit_hash(std::string_view text);

}  // namespace mcpclass::learned
