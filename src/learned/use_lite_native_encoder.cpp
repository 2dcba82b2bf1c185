#include "learned/use_lite_native_encoder.hpp"

#include "checkpoint/safetensors.hpp"
#include "kernels/attention_head.hpp"
#include "learned/compute_choice.hpp"
#include "learned/learned_errors.hpp"
#include "learned/length_batches.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <malloc.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace mcpclass::learned::detail {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

constexpr std::size_t kMaxTokens = 128;  // the model's own limit (positions of the timing signal)
constexpr std::size_t kEmbedding = 256;
constexpr std::size_t kWidth = 512;
constexpr std::size_t kHeads = 4;
constexpr std::size_t kVocabulary = 8002;
// Rows are padded to a multiple of this (padding is masked), so a handful of matmul shapes, and
// their compiled kernels, serve every query length.
constexpr std::size_t kRowQuantum = 8;
// Rows (texts × padded tokens) of one forward pass: bounds the activations of a large batch
// (~6 MB per 1,536-wide layer) and the number of distinct matmul shapes it compiles.
constexpr std::size_t kMaxBatchRows = 1024;
// Batches pad their rows further, to a multiple of this: each distinct row count keeps its own
// compiled matmuls (~0.25 MB each), so a large index build compiles at most 4 shapes.
constexpr std::size_t kBatchRowQuantum = 256;

std::size_t padded_width(std::size_t tokens) {
  return (std::max<std::size_t>(tokens, 1) + kRowQuantum - 1) / kRowQuantum * kRowQuantum;
}

std::uint16_t to_bf16(float f) {
  auto bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even, as torch's .to(bfloat16)
  return static_cast<std::uint16_t>(bits >> 16);
}

[[noreturn]] void dnnl_failed(const std::string& what, const dnnl::error& e) {
  throw ClassifyError("oneDNN failed to " + what + ": " + e.what());
}

// The linear layers, in the order of the forward pass.
enum LinearId {
  l0_res,
  l0_qkv,
  l0_out,
  l0_ffn1,
  l0_ffn2,
  l1_qkv,
  l1_out,
  l1_ffn1,
  l1_ffn2,
  kLinears
};
constexpr std::array<const char*, kLinears> kLinearNames = {
    "l0_res", "l0_qkv", "l0_out", "l0_ffn1", "l0_ffn2", "l1_qkv", "l1_out", "l1_ffn1", "l1_ffn2"};
constexpr std::array<std::array<std::size_t, 2>, kLinears> kLinearShapes = {{{256, 512},
                                                                             {256, 768},
                                                                             {256, 512},
                                                                             {512, 1536},
                                                                             {1536, 512},
                                                                             {512, 1536},
                                                                             {512, 512},
                                                                             {512, 1536},
                                                                             {1536, 512}}};

bool is_ffn1(int id) {
  return id == l0_ffn1 || id == l1_ffn1;
}

struct LayerNorm {
  std::vector<float> scale, bias;
};

// Multiplies by weights held in the layout a matmul of this shape prefers (reordered once).
struct Linear {
  std::size_t in = 0, out = 0;
  std::vector<float> weight;  ///< in × out as read (float32 precision): the source of `packed`.
  std::vector<std::uint16_t> weight_bf16;  ///< The same rounded to bfloat16 (bf16 precision).
  dnnl::memory bias;                       ///< 1 × out, float32.
  std::vector<float> bias_values;
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed;  ///< Under Model::mutex_.
};

// The matmuls for one padded row count.
struct Plan {
  std::array<dnnl::matmul, kLinears> matmuls;
  std::array<dnnl::memory, kLinears> weights;  ///< Packed weights each matmul reads.
  std::array<dnnl::memory::desc, kLinears> scratchpads;
};

class NativeUseLite final : public TokenSentenceEncoder {
 public:
  explicit NativeUseLite(const EncoderOptions& options)
      : options_(options), engine_(dnnl::engine::kind::cpu, 0) {
    if (options_.max_tokens == 0 || options_.batch_size == 0)
      throw ClassifyError("max_tokens and batch_size must be positive");
    options_.max_tokens = std::min(options_.max_tokens, kMaxTokens);
    options_.threads = std::max<std::size_t>(options_.threads, 1);
    if (options.precision == EncoderPrecision::int8)
      throw ClassifyError(
          "precision int8 is not implemented for the USE-lite encoder (use auto, "
          "f32 or bf16)");
    // The attention's softmax runs on the engine's kernels (the products on oneDNN).
    kernels_ =
        detail::choose_compute(EncoderPrecision::f32, options.kernels, "the USE-lite encoder")
            .kernels;
    const auto isa = dnnl::get_effective_cpu_isa();
    // oneDNN 2.7 has bfloat16 matmul kernels from AVX-512 (avx512_core) up and none for AVX2:
    // there an explicit bf16 would fail at the first encode with "could not create a primitive
    // descriptor", so it is refused here, by name.
    const auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    if (options.precision == EncoderPrecision::bf16 && (static_cast<unsigned>(isa) & core) != core)
      throw ClassifyError(
          "precision bf16 needs bfloat16 matmuls, which oneDNN runs only on CPUs with AVX-512; "
          "this CPU has none (use precision auto or f32)");
    bf16_ = options.precision == EncoderPrecision::bf16 ||
            (options.precision == EncoderPrecision::automatic &&
             (isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx));
    tokenizer_ = tokenizers::open_text_tokenizer(options.tokenizer_path);
    load_weights(options.encoder_path);
#ifdef __GLIBC__
    // Reading the file raised glibc's mmap threshold, so its freed buffers would stay resident.
    ::malloc_trim(0);
#endif
    model_id_ =
        text_checksum(file_checksum(options.encoder_path) + file_checksum(options.tokenizer_path));
  }

  std::size_t dimension() const override {
    return kWidth;
  }
  std::string model_id() const override {
    return model_id_;
  }
  std::size_t piece_count() const override {
    return tokenizer_->vocab_size();
  }

  std::vector<std::int32_t> token_ids(const std::string& text) const override {
    auto ids = tokenizer_->encode(text).ids;
    if (ids.size() > options_.max_tokens) ids.resize(options_.max_tokens);
    return ids;
  }

 private:
  std::size_t max_tokens() const override {
    return options_.max_tokens;
  }

  std::vector<float> encode_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                const EncodeProgress& progress) const override {
    // oneDNN runs on OpenMP: this thread's team size is its own setting, so it is set per call.
    omp_set_num_threads(static_cast<int>(options_.threads));
    return encode_by_length(
        ids, kWidth, options_.batch_size,
        // At most kMaxBatchRows rows a pass: bounded activations, so one trim at the end is enough.
        [](std::size_t longest) { return kMaxBatchRows / padded_width(longest); }, false,
        [this](TokenRows rows) { return forward(rows); }, progress);
  }

  const checkpoint::SafeTensor& tensor(const checkpoint::SafeTensors& file, const std::string& name,
                                       std::vector<std::int64_t> shape) const {
    return file.require(name, shape, options_.encoder_path);
  }

  void load_weights(const std::string& path) {
    if (!checkpoint::looks_like_safetensors(path))
      throw ClassifyError("'" + path + "' is not a safetensors file");
    const auto file = checkpoint::read_safetensors(path);
    const auto arch = file.metadata.find("architecture");
    if (arch == file.metadata.end() || arch->second != "use-lite")
      throw ClassifyError("'" + path +
                          "' does not hold USE-lite weights (metadata architecture = use-lite)");
    embeddings_ = tensor(file, "embeddings", {kVocabulary, kEmbedding}).values;
    if (bf16_)  // stored in bfloat16 like the linear weights, as the TorchScript bf16 variant does
      for (auto& v : embeddings_) v = std::bit_cast<float>(std::uint32_t{to_bf16(v)} << 16);
    const auto& inv = file.tensors.find("inv_timescales");
    if (inv == file.tensors.end() || inv->second.elements() != kEmbedding / 2)
      throw ClassifyError("'" + path + "' has no 128-value tensor 'inv_timescales'");
    signal_.resize(kMaxTokens * kEmbedding);
    for (std::size_t t = 0; t < kMaxTokens; ++t)
      for (std::size_t j = 0; j < kEmbedding / 2; ++j) {
        const float pos = static_cast<float>(t) * inv->second.values[j];
        signal_[t * kEmbedding + j] = std::sin(pos);
        signal_[t * kEmbedding + kEmbedding / 2 + j] = std::cos(pos);
      }
    auto scalar = [&](const std::string& name) {
      const auto it = file.tensors.find(name);
      if (it == file.tensors.end() || it->second.elements() != 1)
        throw ClassifyError("'" + path + "' has no scalar tensor '" + name + "'");
      return it->second.values[0];
    };
    eps_ = scalar("ln_eps");
    scales_ = {scalar("l0_scale"), scalar("l1_scale")};
    const std::array<std::pair<const char*, std::size_t>, 4> norms = {
        {{"l0_ln", kEmbedding}, {"l0_ffn_ln", kWidth}, {"l1_ln", kWidth}, {"l1_ffn_ln", kWidth}}};
    for (std::size_t i = 0; i < norms.size(); ++i) {
      const std::string n = norms[i].first;
      const auto w = static_cast<std::int64_t>(norms[i].second);
      norms_[i] = {tensor(file, n + "_scale", {w}).values, tensor(file, n + "_bias", {w}).values};
    }
    for (int id = 0; id < kLinears; ++id) {
      auto& l = linears_[id];
      const std::string n = kLinearNames[id];
      l.in = kLinearShapes[id][0];
      l.out = kLinearShapes[id][1];
      const auto in = static_cast<std::int64_t>(l.in), out = static_cast<std::int64_t>(l.out);
      l.weight = tensor(file, n + "_w", {in, out}).values;
      if (bf16_) {
        l.weight_bf16.resize(l.weight.size());
        std::transform(l.weight.begin(), l.weight.end(), l.weight_bf16.begin(), to_bf16);
        l.weight = {};  // half the memory: only the bf16 copy feeds the packed weights
      }
      l.bias_values = tensor(file, n + "_b", {out}).values;
      l.bias = dnnl::memory({{1, out}, dt::f32, tag::ab}, engine_, l.bias_values.data());
    }
    hidden_w_ = tensor(file, "hidden_w", {kWidth, kWidth}).values;
    hidden_b_ = tensor(file, "hidden_b", {kWidth}).values;
    for (const auto& [name, t] : file.tensors)
      for (const float v : t.values)
        if (!std::isfinite(v))
          throw ClassifyError("'" + path + "' tensor '" + name + "' holds non-finite values");
  }

  dt src_type() const {
    return bf16_ ? dt::bf16 : dt::f32;
  }

  // The matmuls for `rows` padded rows, built once per row count and kept.
  std::shared_ptr<const Plan> plan(std::size_t rows) const {
    std::lock_guard lock(mutex_);
    auto& slot = plans_[rows];
    if (slot) return slot;
    auto p = std::make_shared<Plan>();
    const auto m = static_cast<dnnl::memory::dim>(rows);
    try {
      for (int id = 0; id < kLinears; ++id) {
        auto& l = linears_[id];
        const auto k = static_cast<dnnl::memory::dim>(l.in);
        const auto n = static_cast<dnnl::memory::dim>(l.out);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (is_ffn1(id)) {
          dnnl::post_ops ops;
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
          attr.set_post_ops(ops);
        }
        const dnnl::matmul::desc desc({{m, k}, src_type(), tag::ab}, {{k, n}, src_type(), tag::any},
                                      {{1, n}, dt::f32, tag::ab},
                                      {{m, n}, is_ffn1(id) ? src_type() : dt::f32, tag::ab});
        const dnnl::matmul::primitive_desc pd(desc, attr, engine_);
        p->matmuls[id] = dnnl::matmul(pd);
        p->scratchpads[id] = pd.scratchpad_desc();
        p->weights[id] = packed_weights(l, pd.weights_desc());
      }
    } catch (const dnnl::error& e) {
      dnnl_failed("build the encoder's matmuls", e);
    }
    slot = p;
    return slot;
  }

  // The weights of `l` in layout `want`, reordered on first use (under mutex_).
  dnnl::memory packed_weights(Linear& l, const dnnl::memory::desc& want) const {
    for (const auto& [desc, mem] : l.packed)
      if (desc == want) return mem;
    const dnnl::memory::dims dims = {static_cast<dnnl::memory::dim>(l.in),
                                     static_cast<dnnl::memory::dim>(l.out)};
    dnnl::memory plain =
        bf16_ ? dnnl::memory({dims, dt::bf16, tag::ab}, engine_, l.weight_bf16.data())
              : dnnl::memory({dims, dt::f32, tag::ab}, engine_, l.weight.data());
    dnnl::memory packed(want, engine_);
    dnnl::stream s(engine_);
    dnnl::reorder(plain, packed).execute(s, plain, packed);
    s.wait();
    l.packed.emplace_back(want, packed);
    return packed;
  }

  // Activations in the matmul source type: float32 as they are, or rounded to bfloat16.
  struct Source {
    std::vector<float> f32;
    std::vector<std::uint16_t> b16;
    void* data() { return b16.empty() ? static_cast<void*>(f32.data()) : b16.data(); }
    std::size_t size() const { return b16.empty() ? f32.size() : b16.size(); }
  };

  Source as_source(std::vector<float> x) const {
    Source s;
    if (!bf16_) {
      s.f32 = std::move(x);
      return s;
    }
    s.b16.resize(x.size());
    std::transform(x.begin(), x.end(), s.b16.begin(), to_bf16);
    return s;
  }

  // dst = src · W + b (ReLU for ffn1, whose output stays in the source type for ffn2).
  void linear(const Plan& p, int id, std::size_t rows, Source& src, void* dst,
              dnnl::stream& stream) const {
    const auto& l = linears_[id];
    // oneDNN reads rows × in values whatever the vector holds: a short one is a bug, not a crash.
    if (src.size() < rows * l.in)
      throw std::logic_error("native encoder: " + std::string(kLinearNames[id]) + " input has " +
                             std::to_string(src.size()) + " values for " + std::to_string(rows) +
                             " rows");
    const auto m = static_cast<dnnl::memory::dim>(rows);
    const auto k = static_cast<dnnl::memory::dim>(l.in);
    const auto n = static_cast<dnnl::memory::dim>(l.out);
    dnnl::memory s({{m, k}, src_type(), tag::ab}, engine_, src.data());
    dnnl::memory d({{m, n}, is_ffn1(id) ? src_type() : dt::f32, tag::ab}, engine_, dst);
    // Uninitialised: the kernel writes its scratchpad before reading it (no zeroing per matmul).
    const auto scratch =
        std::make_unique_for_overwrite<std::uint8_t[]>(p.scratchpads[id].get_size());
    dnnl::memory pad(p.scratchpads[id], engine_, scratch.get());
    try {
      p.matmuls[id].execute(stream, {{DNNL_ARG_SRC, s},
                                     {DNNL_ARG_WEIGHTS, p.weights[id]},
                                     {DNNL_ARG_BIAS, l.bias},
                                     {DNNL_ARG_DST, d},
                                     {DNNL_ARG_SCRATCHPAD, pad}});
      stream.wait();
    } catch (const dnnl::error& e) {
      dnnl_failed("run a matmul", e);
    }
  }

  std::vector<float> linear_f32(const Plan& p, int id, std::size_t rows, Source& src,
                                dnnl::stream& stream) const {
    std::vector<float> out(rows * linears_[id].out);
    linear(p, id, rows, src, out.data(), stream);
    return out;
  }

  // x @ ffn1 → ReLU → @ ffn2, added onto x.
  void feed_forward(const Plan& p, int ffn1, std::size_t rows, std::vector<float>& x,
                    const LayerNorm& norm, dnnl::stream& stream) const {
    auto h = as_source(layer_norm(x, norm));
    Source mid;
    if (bf16_)
      mid.b16.resize(rows * linears_[ffn1].out);
    else
      mid.f32.resize(rows * linears_[ffn1].out);
    linear(p, ffn1, rows, h, mid.data(), stream);
    const auto y = linear_f32(p, ffn1 + 1, rows, mid, stream);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }

  std::vector<float> layer_norm(const std::vector<float>& x, const LayerNorm& norm) const {
    const std::size_t width = norm.scale.size();
    std::vector<float> out(x.size());
    for (std::size_t r = 0; r < x.size() / width; ++r) {
      const float* in = x.data() + r * width;
      float* o = out.data() + r * width;
      float mean = 0.0f;
      for (std::size_t i = 0; i < width; ++i) mean += in[i];
      mean /= static_cast<float>(width);
      float var = 0.0f;
      for (std::size_t i = 0; i < width; ++i) var += (in[i] - mean) * (in[i] - mean);
      const float inv = 1.0f / std::sqrt(var / static_cast<float>(width) + eps_);
      for (std::size_t i = 0; i < width; ++i)
        o[i] = norm.scale[i] * inv * (in[i] - mean) + norm.bias[i];
    }
    return out;
  }

  // Multi-head self-attention over qkv (rows × 3d, batch-major, `width` tokens per row of the
  // batch); keys past each row's length are masked out.
  std::vector<float> attention(const std::vector<float>& qkv, std::size_t d, float scale,
                               const std::vector<std::size_t>& lengths, std::size_t width,
                               std::size_t rows) const {
    const std::size_t dh = d / kHeads;
    const auto ld = static_cast<dnnl::memory::dim>(3 * d);
    const auto w = static_cast<dnnl::memory::dim>(width);
    std::vector<float> out(rows * d, 0.0f);  // all rows: the next matmul reads the padding too
    std::vector<float> scores(width * width);
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const std::size_t len = std::max<std::size_t>(lengths[b], 1);
      const float* base = qkv.data() + b * width * 3 * d;
      for (std::size_t h = 0; h < kHeads; ++h) {
        const float* q = base + h * dh;
        const float* k = base + d + h * dh;
        const float* v = base + 2 * d + h * dh;
        // scores[len × len] = scale · Q Kᵀ over the real tokens; padded queries are not needed.
        kernels::attention_head(kernels_, q, k, v, ld, len, dh, scale, scores.data(), w,
                                out.data() + b * width * d + h * dh,
                                static_cast<dnnl::memory::dim>(d));
      }
    }
    return out;
  }

  // One batch: right-padded to a common, quantised width; returns rows × 512 unit vectors.
  std::vector<float> forward(TokenRows batch) const {
    std::size_t longest = 1;
    std::vector<std::size_t> lengths;
    for (const auto* ids : batch) {
      lengths.push_back(ids->size());
      longest = std::max(longest, ids->size());
    }
    const std::size_t width = padded_width(longest);
    // Rows past batch.size() × width are padding too: zero, never read back.
    const std::size_t used = batch.size() * width;
    const std::size_t rows =
        batch.size() == 1 ? used
                          : (used + kBatchRowQuantum - 1) / kBatchRowQuantum * kBatchRowQuantum;
    const auto p = plan(rows);
    dnnl::stream stream(engine_);

    std::vector<float> x(rows * kEmbedding, 0.0f);
    for (std::size_t b = 0; b < batch.size(); ++b)
      for (std::size_t t = 0; t < lengths[b]; ++t) {
        auto id = static_cast<std::size_t>((*batch[b])[t]);
        if (id >= kVocabulary) id = 0;  // <unk>
        float* row = x.data() + (b * width + t) * kEmbedding;
        for (std::size_t j = 0; j < kEmbedding; ++j)
          row[j] = 2.0f * embeddings_[id * kEmbedding + j] + signal_[t * kEmbedding + j];
      }

    // Layer 0: 256 → 512 wide; its residual goes through a dense projection.
    auto h = as_source(layer_norm(x, norms_[0]));
    auto xs = as_source(std::move(x));
    auto y = linear_f32(*p, l0_res, rows, xs, stream);
    auto a = as_source(
        attention(linear_f32(*p, l0_qkv, rows, h, stream), 256, scales_[0], lengths, width, rows));
    const auto o0 = linear_f32(*p, l0_out, rows, a, stream);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += o0[i];
    feed_forward(*p, l0_ffn1, rows, y, norms_[1], stream);

    // Layer 1: 512 wide.
    h = as_source(layer_norm(y, norms_[2]));
    a = as_source(attention(linear_f32(*p, l1_qkv, rows, h, stream), kWidth, scales_[1], lengths,
                            width, rows));
    const auto o1 = linear_f32(*p, l1_out, rows, a, stream);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += o1[i];
    feed_forward(*p, l1_ffn1, rows, y, norms_[3], stream);

    // Masked mean pooling → tanh dense → unit length.
    std::vector<float> pooled(batch.size() * kWidth, 0.0f);
    for (std::size_t b = 0; b < batch.size(); ++b) {
      float* pr = pooled.data() + b * kWidth;
      for (std::size_t t = 0; t < lengths[b]; ++t) {
        const float* row = y.data() + (b * width + t) * kWidth;
        for (std::size_t j = 0; j < kWidth; ++j) pr[j] += row[j];
      }
      const float count = static_cast<float>(std::max<std::size_t>(lengths[b], 1));
      for (std::size_t j = 0; j < kWidth; ++j) pr[j] /= count;
    }
    std::vector<float> out(batch.size() * kWidth);
    const auto bs = static_cast<dnnl::memory::dim>(batch.size());
    const auto dw = static_cast<dnnl::memory::dim>(kWidth);
    dnnl::sgemm('N', 'N', bs, dw, dw, 1.0f, pooled.data(), dw, hidden_w_.data(), dw, 0.0f,
                out.data(), dw);
    for (std::size_t b = 0; b < batch.size(); ++b) {
      float* row = out.data() + b * kWidth;
      double norm = 0.0;
      for (std::size_t j = 0; j < kWidth; ++j) {
        row[j] = std::tanh(row[j] + hidden_b_[j]);
        norm += static_cast<double>(row[j]) * row[j];
      }
      const auto inv = static_cast<float>(1.0 / std::max(std::sqrt(norm), 1e-6));
      for (std::size_t j = 0; j < kWidth; ++j) row[j] *= inv;
    }
    return out;
  }

  EncoderOptions options_;
  dnnl::engine engine_;
  bool bf16_ = false;
  kernels::KernelSet kernels_ = kernels::KernelSet::portable;
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer_;
  std::string model_id_;
  std::vector<float> embeddings_, signal_, hidden_w_, hidden_b_;
  float eps_ = 1e-6f;
  std::array<float, 2> scales_{};
  std::array<LayerNorm, 4> norms_;
  mutable std::array<Linear, kLinears> linears_;
  mutable std::mutex mutex_;  ///< Guards plans_ and each Linear's packed weights.
  mutable std::map<std::size_t, std::shared_ptr<const Plan>> plans_;
};

}  // namespace

bool is_native_encoder_file(const std::string& path) {
  return checkpoint::looks_like_safetensors(path);
}

std::shared_ptr<const SentenceEncoder> load_native_use_lite(const EncoderOptions& options) {
  try {
    return std::make_shared<NativeUseLite>(options);
  } catch (const dnnl::error& e) {
    dnnl_failed("set up the encoder '" + options.encoder_path + "'", e);
  }
}

}  // namespace mcpclass::learned::detail
