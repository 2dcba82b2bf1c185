// libtorch translation unit: running TorchScript text models (the encoder contract of
// embedding_encoder.hpp) behind any text tokenizer (text_tokenizer.hpp).
#include "kernels/blas_threads.hpp"
#include "learned/length_batches.hpp"
#include "learned/torch_plugin/plugin_impl.hpp"
#include "learned/torch_plugin/torch_files.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <ATen/Parallel.h>
#include <torch/script.h>
#include <boost/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

std::string torch_message(const c10::Error& e) {
  return e.what_without_backtrace();
}

class TorchTextModel final : public SentenceEncoder {
 public:
  TorchTextModel(const EncoderOptions& options, bool normalize, std::string_view what)
      : options_(options), normalize_(normalize) {
    if (options_.max_tokens == 0 || options_.batch_size == 0)
      throw ClassifyError("max_tokens and batch_size must be positive");
    tokenizer_ = tokenizers::open_text_tokenizer(options.tokenizer_path);
    // libtorch's intra-op pool is set per call (run_batch); OpenBLAS has its own, set here.
    kernels::set_blas_threads(static_cast<int>(options_.threads));
    try {
      module_ = torch::jit::load(options.encoder_path, torch::kCPU);
      module_.eval();
    } catch (const c10::Error& e) {
      throw ClassifyError("cannot load " + std::string(what) + " '" + options.encoder_path +
                          "': " + torch_message(e));
    } catch (const std::exception& e) {
      throw ClassifyError("cannot load " + std::string(what) + " '" + options.encoder_path +
                          "': " + e.what());
    }
    model_id_ =
        text_checksum(file_checksum(options.encoder_path) + file_checksum(options.tokenizer_path));
    // A probe checks the forward(ids, mask) -> [B, D] contract once, with a clear message.
    try {
      dimension_ = 0;
      const auto probe = tokens("probe");
      const std::array<const std::vector<std::int32_t>*, 1> one{&probe};
      const auto out = run_batch(one);
      dimension_ = static_cast<std::size_t>(out.size(1));
    } catch (const ClassifyError& e) {
      throw ClassifyError(std::string(what) + " '" + options.encoder_path +
                          "' does not follow forward(ids, mask) -> float[B, D]: " + e.what());
    }
  }

  std::size_t dimension() const override { return dimension_; }
  std::string model_id() const override { return model_id_; }

  std::vector<std::int32_t> token_ids(const std::string& text) const override {
    return tokens(text);
  }

  std::vector<float> encode(std::span<const std::string> texts,
                            const EncodeProgress& progress) const override {
    std::vector<std::vector<std::int32_t>> ids(texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) ids[i] = tokens(texts[i]);
    return encode_ids(ids, progress);
  }

  std::vector<float> encode_tokens(std::span<const std::vector<std::int32_t>> ids) const override {
    std::vector<std::vector<std::int32_t>> rows(ids.begin(), ids.end());
    for (auto& r : rows)
      if (r.size() > options_.max_tokens) r.resize(options_.max_tokens);
    return encode_ids(rows, {});
  }

  std::size_t piece_count() const override { return tokenizer_->vocab_size(); }

 private:
  std::vector<float> encode_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                const EncodeProgress& progress) const {
    return detail::encode_by_length(
        ids, dimension_, options_.batch_size, {}, true,
        [this](detail::TokenRows rows) {
          const auto result = run_batch(rows);
          const float* data = result.data_ptr<float>();
          return std::vector<float>(data, data + rows.size() * dimension_);
        },
        progress);
  }

  std::vector<std::int32_t> tokens(std::string_view text) const {
    auto ids = tokenizer_->encode(text).ids;
    if (ids.size() > options_.max_tokens) ids.resize(options_.max_tokens);
    return ids;
  }

  // [rows, D] contiguous float tensor for right-padded rows.
  torch::Tensor run_batch(detail::TokenRows rows) const {
    std::size_t width = 1;
    for (const auto* r : rows) width = std::max(width, r->size());
    auto ids = torch::zeros(
        {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)}, torch::kInt64);
    auto mask = torch::zeros_like(ids);
    auto ia = ids.accessor<std::int64_t, 2>();
    auto ma = mask.accessor<std::int64_t, 2>();
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t t = 0; t < rows[r]->size(); ++t) {
        ia[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = (*rows[r])[t];
        ma[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = 1;
      }
    try {
      at::set_num_threads(static_cast<int>(options_.threads));
      c10::InferenceMode guard;
      // forward() is not const in the API but runs no mutation: the TorchScript interpreter is
      // reentrant, so concurrent calls on one module are safe.
      auto out = const_cast<torch::jit::Module&>(module_).forward({ids, mask});
      if (!out.isTensor()) throw ClassifyError("forward did not return a tensor");
      auto t = out.toTensor();
      if (t.dim() != 2 || t.size(0) != static_cast<std::int64_t>(rows.size()) ||
          (dimension_ != 0 && t.size(1) != static_cast<std::int64_t>(dimension_)))
        throw ClassifyError("forward returned shape " + c10::str(t.sizes()));
      t = t.to(torch::kFloat32).contiguous();
      if (normalize_) t = t / t.norm(2, 1, true).clamp_min(1e-12);
      if (!torch::isfinite(t).all().item<bool>())
        throw ClassifyError("forward returned non-finite values");
      return t;
    } catch (const c10::Error& e) {
      throw ClassifyError("inference failed: " + torch_message(e));
    }
  }

  EncoderOptions options_;
  bool normalize_;
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer_;
  torch::jit::Module module_;
  std::size_t dimension_ = 0;
  std::string model_id_;
};

}  // namespace

namespace detail {

std::shared_ptr<const SentenceEncoder> load_torchscript_text_model(const EncoderOptions& options,
                                                                   bool normalize,
                                                                   std::string_view what) {
  return std::make_shared<TorchTextModel>(options, normalize, what);
}

}  // namespace detail

}  // namespace mcpclass::learned
