// Loads libmcpclass_spm.so with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) so sentencepiece's
// embedded protobuf never meets libtorch's (issue 7, pitfall 1).
#include "tokenizers/tokenizer_sentencepiece.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/sentencepiece_model_writer.hpp"
#include "tokenizers/sentencepiece_shim.h"
#include "tokenizers/sentencepiece_shim_path.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mcpclass::tokenizers {

using classify::ClassifyError;

namespace {

void append_bytes(void* user, const char* data, size_t size) {
  static_cast<std::string*>(user)->assign(data, size);
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
    handle = tokenizers::open_module(
        tokenizers::current_module_search(tokenizers::RuntimeModule::sentencepiece_shim),
        RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    load = reinterpret_cast<mcpclass_spm_load_fn>(dlsym(handle, "mcpclass_spm_load"));
    encode = reinterpret_cast<mcpclass_spm_encode_fn>(dlsym(handle, "mcpclass_spm_encode"));
    piece_count =
        reinterpret_cast<mcpclass_spm_piece_count_fn>(dlsym(handle, "mcpclass_spm_piece_count"));
    free = reinterpret_cast<mcpclass_spm_free_fn>(dlsym(handle, "mcpclass_spm_free"));
    normalizer =
        reinterpret_cast<mcpclass_spm_normalizer_fn>(dlsym(handle, "mcpclass_spm_normalizer"));
    if (!load || !encode || !piece_count || !free || !normalizer) {
      dlclose(handle);
      throw classify::ClassifyError(std::string(tokenizers::kSentencePieceShimName) +
                                    " lacks the expected entry points");
    }
  }
  ~Shim() { dlclose(handle); }
  Shim(const Shim&) = delete;
  Shim& operator=(const Shim&) = delete;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw classify::ClassifyError(std::string("cannot open ") + what + " '" + path + "'");
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
    throw classify::ClassifyError("invalid sentencepiece model '" + model_path + "': " + error);
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
    throw classify::ClassifyError("sentencepiece encode failed: " + out.error);
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
    throw classify::ClassifyError("cannot build the NFKC normalizer: " + out.error);
  try {
    return tokenizers::write_unigram_model(tokenizers::pieces_from_tfjs_vocab(vocab), out.spec);
  } catch (const std::runtime_error& e) {
    throw classify::ClassifyError("'" + vocab_json_path + "': " + e.what());
  }
}

}  // namespace mcpclass::tokenizers
