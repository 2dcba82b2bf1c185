// `mcpclass model pull ORG/NAME[@REVISION]`: a checkpoint from the Hugging Face Hub (or any
// server answering its API, HF_ENDPOINT) into the Hub's own cache layout (learned/hub_cache.hpp),
// as huggingface_hub's snapshot_download fills it: the revision's commit and file list from
// /api/models/ORG/NAME/revision/REV, each file from /ORG/NAME/resolve/COMMIT/PATH (following the
// redirect of a large file to its storage), kept as blobs/<etag> behind
// snapshots/<commit>/<path> symlinks, and refs/<revision>. A blob already there is not fetched
// again; a partial one (<etag>.incomplete) is resumed with a Range request; every file is checked
// against the size and the hash the hub published for it (the sha256 of a large (LFS) file, the
// git blob id of a small one) before it is kept.
// Thread-safety: pull_model() may run on any thread; it shares nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace mcpclass::cli {

struct PullOptions {
  std::string repo;       ///< ORG/NAME[@REVISION]
  std::string endpoint;   ///< "" = HF_ENDPOINT, else https://huggingface.co
  std::string token;      ///< "" = HF_TOKEN (sent to the endpoint's host only)
  std::string cache_dir;  ///< "" = hub_cache_dir()
  /// Every file of the revision; by default only what mcpclass reads (*.json, *.safetensors,
  /// *.txt, *.model: configs, weights, tokenizers, vocabularies), not other formats' weights.
  bool all_files = false;
  std::string ca_file;  ///< PEM CAs for https:// peers; "" = the system's
  /// Bytes of the API's answer (the file list) kept at most.
  std::size_t max_api_bytes = 16u << 20;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};  ///< per file
};

/// Why a pull failed, for people: the repository, revision or file and what went wrong.
class PullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Called as each file starts (`done` 0) and ends (`done` == `total`).
using PullProgress =
    std::function<void(const std::string& file, std::uint64_t done, std::uint64_t total)>;

/// Pulls `options.repo` and returns its snapshot directory. Throws PullError.
std::string pull_model(const PullOptions& options, const PullProgress& progress = {});

}  // namespace mcpclass::cli
