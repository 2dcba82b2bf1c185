#include "cli/model_pull.hpp"

#include "mcpclass/learned/hub_cache.hpp"
#include "net/http_client.hpp"
#include "util/env_value.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <vector>

namespace mcpclass::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kDefaultEndpoint = "https://huggingface.co";
constexpr int kMaxRedirects = 5;
// A file's body: bounded by the size the hub announced, checked as it streams.
constexpr std::size_t kMaxFileBytes = std::size_t{1} << 42;

// The files mcpclass reads from a checkpoint or a sentence-transformers directory.
bool wanted(const std::string& path) {
  for (const char* ext : {".json", ".safetensors", ".txt", ".model"})
    if (path.ends_with(ext)) return true;
  return false;
}

// A path the hub lists must stay inside the snapshot.
bool safe_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string::npos) return false;
  for (const auto& part : fs::path(path))
    if (part == ".." || part == ".") return false;
  return true;
}

// An ETag without W/ and quotes, as huggingface_hub's _normalize_etag.
std::string normalize_etag(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return etag;
}

bool is_hex(const std::string& s, std::size_t n) {
  if (s.size() != n) return false;
  for (const char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// sha256 of an LFS file, or the git blob id (sha1 of "blob <size>\0" then the bytes).
class Digest {
 public:
  Digest(bool git_blob, std::uint64_t size) : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(ctx_.get(), git_blob ? EVP_sha1() : EVP_sha256(), nullptr);
    if (git_blob) {
      const std::string header = "blob " + std::to_string(size) + std::string(1, '\0');
      update(header);
    }
  }
  void update(std::string_view data) { EVP_DigestUpdate(ctx_.get(), data.data(), data.size()); }
  std::string hex() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_.get(), out, &n);
    std::string s;
    for (unsigned int i = 0; i < n; ++i) s += fmt::format("{:02x}", out[i]);
    return s;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

// What the resolve URL says of a file before its bytes are read.
struct FileMeta {
  std::string etag;
  std::uint64_t size = 0;
  std::string location;  ///< the redirect of a large file; "" = the resolve URL serves it
};

class Puller {
 public:
  explicit Puller(const PullOptions& o)
      : options_(o),
        endpoint_(o.endpoint.empty()
                      ? (util::env_value("HF_ENDPOINT").empty() ? kDefaultEndpoint
                                                                : util::env_value("HF_ENDPOINT"))
                      : o.endpoint),
        token_(o.token.empty() ? util::env_value("HF_TOKEN") : o.token),
        repo_(learned::parse_hub_repo(o.repo)),
        cache_(o.cache_dir.empty() ? learned::hub_cache_dir() : o.cache_dir),
        api_(std::chrono::seconds(20), o.ca_file, o.max_api_bytes),
        files_(std::chrono::seconds(20), o.ca_file, kMaxFileBytes) {
    while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
    base_ = net::parse_http_url(endpoint_);
  }

  std::string run(const PullProgress& progress) {
    const auto [commit, files] = revision();
    const fs::path repo_dir(learned::hub_repo_dir(cache_, repo_.id));
    const fs::path snapshot = repo_dir / "snapshots" / commit;
    std::error_code ec;
    fs::create_directories(repo_dir / "blobs", ec);
    fs::create_directories(snapshot, ec);
    if (ec) throw PullError(fmt::format("cannot create '{}': {}", snapshot.string(), ec.message()));
    for (const auto& file : files) {
      const auto meta = metadata(commit, file);
      const fs::path blob = repo_dir / "blobs" / meta.etag;
      if (progress) progress(file, 0, meta.size);
      if (!fs::exists(blob) || fs::file_size(blob) != meta.size) fetch(commit, file, meta, blob);
      link(snapshot / file, blob);
      if (progress) progress(file, meta.size, meta.size);
    }
    if (!learned::is_commit_hash(repo_.revision)) {
      const fs::path ref = repo_dir / "refs" / repo_.revision;
      fs::create_directories(ref.parent_path(), ec);
      std::ofstream(ref, std::ios::trunc) << commit;
    }
    return snapshot.string();
  }

 private:
  std::vector<std::pair<std::string, std::string>> headers(const net::HttpUrl& to) const {
    std::vector<std::pair<std::string, std::string>> h{{"User-Agent", "mcpclass"},
                                                       {"Accept-Encoding", "identity"}};
    // The token goes to the endpoint only, never to the storage a large file redirects to.
    if (!token_.empty() && to.host == base_.host && to.port == base_.port && to.tls == base_.tls)
      h.emplace_back("Authorization", "Bearer " + token_);
    return h;
  }

  std::string url(const std::string& path) const { return endpoint_ + path; }

  // A refusal by the hub, named as huggingface_hub names it (X-Error-Code), else by status.
  [[noreturn]] void refused(const net::HttpHead& head, const std::string& what) const {
    const auto code = head.header("x-error-code");
    const std::string repo = "'" + repo_.id + "'";
    const bool denied = code == "GatedRepo" || head.status == 401 || head.status == 403;
    if (denied && token_.empty())
      throw PullError(fmt::format(
          "{}: {} needs authorization (a gated or private repository): set HF_TOKEN or --token "
          "(HTTP {})",
          what, repo, head.status));
    if (denied)
      throw PullError(
          fmt::format("{}: the token may not read {} (HTTP {})", what, repo, head.status));
    if (code == "RevisionNotFound")
      throw PullError(fmt::format("{}: revision '{}' of {} not found at {}", what, repo_.revision,
                                  repo, endpoint_));
    if (code == "EntryNotFound")
      throw PullError(fmt::format("{}: not found in {}@{}", what, repo, repo_.revision));
    if (head.status == 404)
      throw PullError(fmt::format("{}: repository {} not found at {}", what, repo, endpoint_));
    throw PullError(fmt::format("{}: {} answered HTTP {}", what, endpoint_, head.status));
  }

  // The revision's commit and the files to pull.
  std::pair<std::string, std::vector<std::string>> revision() {
    const std::string target = "/api/models/" + repo_.id + "/revision/" + repo_.revision;
    const auto to = net::parse_http_url(url(target));
    net::HttpRequest req;
    req.method = "GET";
    req.target = to.target;
    req.headers = headers(to);
    req.timeout = std::chrono::seconds(60);
    const auto r = api_.perform(to, std::move(req));
    if (r.error) throw PullError(fmt::format("{}: {}", url(target), r.error.message));
    if (r.head.status != 200) refused(r.head, repo_.id + "@" + repo_.revision);
    boost::system::error_code ec;
    const auto doc = json::parse(r.body, ec);
    const auto* sha = doc.is_object() ? doc.as_object().if_contains("sha") : nullptr;
    const auto* siblings = doc.is_object() ? doc.as_object().if_contains("siblings") : nullptr;
    if (ec || sha == nullptr || !sha->is_string() || !learned::is_commit_hash(sha->get_string()) ||
        siblings == nullptr || !siblings->is_array())
      throw PullError(
          fmt::format("{}: not the hub's answer (a JSON object with a 40-hex sha and "
                      "siblings)",
                      url(target)));
    std::vector<std::string> files;
    for (const auto& s : siblings->as_array()) {
      const auto* name = s.is_object() ? s.as_object().if_contains("rfilename") : nullptr;
      if (name == nullptr || !name->is_string())
        throw PullError(url(target) + ": a sibling without rfilename");
      std::string path(name->get_string());
      if (!safe_path(path))
        throw PullError(
            fmt::format("{}: file '{}' leaves the snapshot directory", url(target), path));
      if (options_.all_files || wanted(path)) files.push_back(std::move(path));
    }
    if (files.empty())
      throw PullError(
          fmt::format("{}@{} has no file mcpclass reads (*.json, *.safetensors, "
                      "*.txt, *.model); --all pulls every file",
                      repo_.id, repo_.revision));
    return {std::string(sha->get_string()), files};
  }

  // The resolve URL's head: its ETag and size (X-Linked-* for a redirected large file).
  FileMeta metadata(const std::string& commit, const std::string& file) {
    const auto to = net::parse_http_url(url("/" + repo_.id + "/resolve/" + commit + "/" + file));
    std::promise<net::HttpHead> head;
    auto got = head.get_future();
    auto done = std::make_shared<std::promise<void>>();
    auto ended = done->get_future();
    net::HttpRequest req;
    req.method = "GET";
    req.target = to.target;
    req.headers = headers(to);
    req.timeout = std::chrono::seconds(60);
    std::shared_ptr<bool> seen = std::make_shared<bool>(false);
    net::HttpEngine::ExchangeId id = 0;
    net::HttpError failure;
    id = files_.start(to, std::move(req),
                      {.on_sent = {},
                       .on_head =
                           [&head, seen](const net::HttpHead& h) {
                             *seen = true;
                             head.set_value(h);
                           },
                       .on_data = {},
                       .on_end =
                           [done, seen, &head, &failure](const net::HttpError& e) {
                             if (!*seen) {
                               failure = e;
                               head.set_value({});
                             }
                             done->set_value();
                           }});
    const auto h = got.get();
    files_.cancel(id);  // the head is all this asks; the bytes come in fetch()
    ended.wait();
    const std::string what = file + " (" + to.origin() + to.target + ")";
    if (h.status == 0) throw PullError(fmt::format("{}: {}", what, failure.message));
    FileMeta m;
    const bool redirected = h.status >= 300 && h.status < 400;
    if (!redirected && h.status != 200) refused(h, file);
    m.etag = normalize_etag(h.header("x-linked-etag"));
    if (m.etag.empty()) m.etag = normalize_etag(h.header("etag"));
    std::string size = h.header("x-linked-size");
    if (size.empty()) size = h.header("content-length");
    if (redirected) {
      m.location = h.header("location");
      if (m.location.empty()) throw PullError(what + ": a redirect without Location");
    }
    if (!is_hex(m.etag, 40) && !is_hex(m.etag, 64))
      throw PullError(fmt::format("{}: no ETag the hub publishes (a sha256 or a git blob id): '{}'",
                                  what, m.etag));
    char* end = nullptr;
    m.size = std::strtoull(size.c_str(), &end, 10);
    if (size.empty() || end == nullptr || *end != '\0')
      throw PullError(what + ": no size (X-Linked-Size or Content-Length)");
    return m;
  }

  // The file's bytes into blobs/<etag>.incomplete (resumed from what is there), checked, then
  // renamed to blobs/<etag>.
  void fetch(const std::string& commit, const std::string& file, const FileMeta& meta,
             const fs::path& blob) {
    const fs::path partial = blob.string() + ".incomplete";
    std::uint64_t have = fs::exists(partial) ? fs::file_size(partial) : 0;
    if (have > meta.size) {
      fs::remove(partial);
      have = 0;
    }
    // Hashed as it streams in: only a resumed file's bytes already on disk are read back, once.
    const bool git_blob = meta.etag.size() == 40;
    Digest digest(git_blob, meta.size);
    if (have > 0) {
      std::ifstream in(partial, std::ios::binary);
      std::vector<char> buf(1 << 16);
      std::uint64_t left = have;
      while (left > 0 && in.read(buf.data(), static_cast<std::streamsize>(
                                                 std::min<std::uint64_t>(left, buf.size())))) {
        digest.update({buf.data(), static_cast<std::size_t>(in.gcount())});
        left -= static_cast<std::uint64_t>(in.gcount());
      }
    }
    const auto resolve =
        net::parse_http_url(url("/" + repo_.id + "/resolve/" + commit + "/" + file));
    net::HttpUrl to = meta.location.empty() ? resolve : net::resolve_url(resolve, meta.location);
    for (int hop = 0;; ++hop) {
      if (hop > kMaxRedirects) throw PullError(file + ": more than 5 redirects");
      net::HttpRequest req;
      req.method = "GET";
      req.target = to.target;
      req.headers = headers(to);
      if (have > 0) req.headers.emplace_back("Range", fmt::format("bytes={}-", have));
      req.timeout = options_.timeout;
      std::ofstream out;
      std::uint64_t written = 0;
      bool writing = false, too_long = false;
      net::HttpHead head;
      auto done = std::make_shared<std::promise<net::HttpError>>();
      auto ended = done->get_future();
      net::HttpEngine::ExchangeId id = 0;
      id = files_.start(to, std::move(req),
                        {.on_sent = {},
                         .on_head =
                             [&](const net::HttpHead& h) {
                               head = h;
                               if (h.status == 206 && have > 0) {
                                 out.open(partial, std::ios::binary | std::ios::app);
                                 writing = true;
                               } else if (h.status == 200) {
                                 have = 0;  // the whole file: start over
                                 digest = Digest(git_blob, meta.size);
                                 out.open(partial, std::ios::binary | std::ios::trunc);
                                 writing = true;
                               }
                             },
                         .on_data =
                             [&](std::string_view data) {
                               if (!writing) return;
                               if (have + written + data.size() > meta.size) {
                                 too_long = true;
                                 writing = false;
                                 files_.cancel(id);
                                 return;
                               }
                               out.write(data.data(), static_cast<std::streamsize>(data.size()));
                               digest.update(data);
                               written += data.size();
                             },
                         .on_end = [done](const net::HttpError& e) { done->set_value(e); }});
      const auto error = ended.get();
      out.close();
      const std::string what = file + " (" + to.origin() + to.target + ")";
      if (too_long)
        throw PullError(
            fmt::format("{}: more bytes than the {} the hub announced", what, meta.size));
      if (head.status >= 300 && head.status < 400 && !head.header("location").empty()) {
        to = net::resolve_url(to, head.header("location"));
        continue;
      }
      if (error)
        throw PullError(fmt::format("{}: {} after {} of {} bytes (run the pull again to resume)",
                                    what, error.message, have + written, meta.size));
      if (head.status != 200 && head.status != 206) refused(head, file);
      break;
    }
    const std::uint64_t size = fs::exists(partial) ? fs::file_size(partial) : 0;
    if (size != meta.size)
      throw PullError(
          fmt::format("{}: {} bytes, the hub announced {} (run the pull again to "
                      "resume)",
                      file, size, meta.size));
    if (const auto hash = digest.hex(); hash != meta.etag) {
      fs::remove(partial);
      throw PullError(fmt::format("{}: its {} is {}, not the {} the hub published: not kept", file,
                                  git_blob ? "git blob id" : "sha256", hash, meta.etag));
    }
    fs::rename(partial, blob);
  }

  // snapshots/<commit>/<file> → the blob, relative as huggingface_hub links it.
  static void link(const fs::path& at, const fs::path& blob) {
    std::error_code ec;
    fs::create_directories(at.parent_path(), ec);
    fs::remove(at, ec);
    fs::create_symlink(fs::relative(blob, at.parent_path()), at, ec);
    if (ec) throw PullError(fmt::format("cannot link '{}': {}", at.string(), ec.message()));
  }

  PullOptions options_;
  std::string endpoint_, token_;
  learned::HubRepo repo_;
  std::string cache_;
  net::HttpUrl base_;
  net::HttpEngine api_, files_;
};

}  // namespace

std::string pull_model(const PullOptions& options, const PullProgress& progress) {
  try {
    return Puller(options).run(progress);
  } catch (const PullError&) {
    throw;
  } catch (const std::exception& e) {
    throw PullError(e.what());
  }
}

}  // namespace mcpclass::cli
