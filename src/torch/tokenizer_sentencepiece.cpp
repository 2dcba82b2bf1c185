// Loads libmcpclass_spm.so with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) so sentencepiece's
// embedded protobuf never meets libtorch's (issue 7, pitfall 1).
#include "mcpclass/classify/tokenizer_sentencepiece.hpp"

#include "mcpclass/classify/errors.hpp"
#include "torch/sentencepiece_model_writer.hpp"
#include "torch/sentencepiece_shim.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef MCPCLASS_SPM_SHIM_PATH
#define MCPCLASS_SPM_SHIM_PATH ""
#endif

namespace mcpclass::classify {

namespace {

constexpr const char* kShimName = "libmcpclass_spm.so";

void append_bytes(void* user, const char* data, size_t size) {
  static_cast<std::string*>(user)->assign(data, size);
}

// The shim: $MCPCLASS_SPM_SHIM, next to the module holding this code, then the build tree.
std::vector<std::string> shim_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("MCPCLASS_SPM_SHIM"); env != nullptr && *env != '\0')
    out.emplace_back(env);
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&shim_candidates), &info) != 0 &&
      info.dli_fname != nullptr) {
    const auto dir = std::filesystem::path(info.dli_fname).parent_path();
    out.push_back((dir / kShimName).string());
    out.push_back((dir / "lib" / kShimName).string());
  }
  if (*MCPCLASS_SPM_SHIM_PATH != '\0') out.emplace_back(MCPCLASS_SPM_SHIM_PATH);
  return out;
}

// One dlopen'ed shim; the handle is closed when the last owner goes away.
struct Shim {
  void* handle = nullptr;
  mcpclass_spm_load_fn load = nullptr;
  mcpclass_spm_encode_fn encode = nullptr;
  mcpclass_spm_piece_count_fn piece_count = nullptr;
  mcpclass_spm_free_fn free = nullptr;
  mcpclass_spm_normalizer_fn normalizer = nullptr;

  Shim() {
    std::string tried;
    for (const auto& path : shim_candidates()) {
      if (!std::filesystem::exists(path)) continue;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (handle != nullptr) break;
      const char* err = dlerror();
      tried += std::string("; ") + (err ? err : path);
    }
    if (handle == nullptr)
      throw ClassifyError(std::string("cannot load the sentencepiece shim ") + kShimName +
                          " (set MCPCLASS_SPM_SHIM to its path)" + tried);
    load = reinterpret_cast<mcpclass_spm_load_fn>(dlsym(handle, "mcpclass_spm_load"));
    encode = reinterpret_cast<mcpclass_spm_encode_fn>(dlsym(handle, "mcpclass_spm_encode"));
    piece_count =
        reinterpret_cast<mcpclass_spm_piece_count_fn>(dlsym(handle, "mcpclass_spm_piece_count"));
    free = reinterpret_cast<mcpclass_spm_free_fn>(dlsym(handle, "mcpclass_spm_free"));
    normalizer =
        reinterpret_cast<mcpclass_spm_normalizer_fn>(dlsym(handle, "mcpclass_spm_normalizer"));
    if (!load || !encode || !piece_count || !free || !normalizer) {
      dlclose(handle);
      throw ClassifyError(std::string(kShimName) + " lacks the expected entry points");
    }
  }
  ~Shim() { dlclose(handle); }
  Shim(const Shim&) = delete;
  Shim& operator=(const Shim&) = delete;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError(std::string("cannot open ") + what + " '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

struct SentencePieceTokenizer::Impl {
  std::shared_ptr<Shim> shim;
  mcpclass_spm* model = nullptr;
  ~Impl() {
    if (model != nullptr) shim->free(model);
  }
};

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path)
    : impl_(std::make_unique<Impl>()) {
  const std::string bytes = read_file(model_path, "tokenizer model");
  impl_->shim = std::make_shared<Shim>();
  std::string error;
  if (impl_->shim->load(bytes.data(), bytes.size(), &impl_->model, append_bytes, &error) != 0)
    throw ClassifyError("invalid sentencepiece model '" + model_path + "': " + error);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<std::int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  struct Out {
    std::vector<std::int32_t> ids;
    std::string error;
  } out;
  // The shim uses one `user` pointer for both sinks; route by type through a small adapter.
  auto ids_sink = [](void* user, const int32_t* ids, size_t count) {
    static_cast<Out*>(user)->ids.assign(ids, ids + count);
  };
  auto err_sink = [](void* user, const char* data, size_t size) {
    static_cast<Out*>(user)->error.assign(data, size);
  };
  if (impl_->shim->encode(impl_->model, text.data(), text.size(), ids_sink, err_sink, &out) != 0)
    throw ClassifyError("sentencepiece encode failed: " + out.error);
  return out.ids;
}

std::size_t SentencePieceTokenizer::piece_count() const {
  return static_cast<std::size_t>(impl_->shim->piece_count(impl_->model));
}

std::string SentencePieceTokenizer::model_from_tfjs_vocab(const std::string& vocab_json_path) {
  const std::string vocab = read_file(vocab_json_path, "vocabulary");
  Shim shim;
  struct Out {
    std::string spec;
    std::string error;
  } out;
  auto spec_sink = [](void* user, const char* d, size_t n) {
    static_cast<Out*>(user)->spec.assign(d, n);
  };
  auto err_sink = [](void* user, const char* d, size_t n) {
    static_cast<Out*>(user)->error.assign(d, n);
  };
  if (shim.normalizer("nfkc", spec_sink, err_sink, &out) != 0)
    throw ClassifyError("cannot build the NFKC normalizer: " + out.error);
  try {
    return detail::write_unigram_model(detail::pieces_from_tfjs_vocab(vocab), out.spec);
  } catch (const std::runtime_error& e) {
    throw ClassifyError("'" + vocab_json_path + "': " + e.what());
  }
}

}  // namespace mcpclass::classify
