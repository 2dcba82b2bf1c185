// libtorch translation unit 1 of 2: running TorchScript text models, and converting the TF.js
// USE-lite package into one.
#include "mcpclass/classify/embedding_encoder.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/learned_settings.hpp"
#include "mcpclass/classify/tokenizer_sentencepiece.hpp"
#include "torch/torch_text_model.hpp"

#include <ATen/Parallel.h>
#include <torch/script.h>
#include <boost/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

namespace mcpclass::classify {

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
    tokenizer_ = std::make_unique<SentencePieceTokenizer>(options.tokenizer_path);
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
      const auto out = run_batch({tokens("probe")});
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
    // Batches of similar length waste little on padding; results go back in input order.
    std::vector<std::size_t> order(texts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ids[a].size() < ids[b].size(); });
    std::vector<float> out(texts.size() * dimension_);
    for (std::size_t start = 0; start < order.size(); start += options_.batch_size) {
      const std::size_t end = std::min(order.size(), start + options_.batch_size);
      std::vector<std::vector<std::int32_t>> batch;
      for (std::size_t i = start; i < end; ++i) batch.push_back(std::move(ids[order[i]]));
      const auto result = run_batch(batch);
      const float* data = result.data_ptr<float>();
      for (std::size_t i = start; i < end; ++i)
        std::copy_n(data + (i - start) * dimension_, dimension_,
                    out.data() + order[i] * dimension_);
      if (progress) progress(end, texts.size());
    }
    return out;
  }

 private:
  std::vector<std::int32_t> tokens(std::string_view text) const {
    auto ids = tokenizer_->encode(text);
    if (ids.size() > options_.max_tokens) ids.resize(options_.max_tokens);
    return ids;
  }

  // [rows, D] contiguous float tensor for right-padded rows.
  torch::Tensor run_batch(const std::vector<std::vector<std::int32_t>>& rows) const {
    std::size_t width = 1;
    for (const auto& r : rows) width = std::max(width, r.size());
    auto ids = torch::zeros(
        {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)}, torch::kInt64);
    auto mask = torch::zeros_like(ids);
    auto ia = ids.accessor<std::int64_t, 2>();
    auto ma = mask.accessor<std::int64_t, 2>();
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t t = 0; t < rows[r].size(); ++t) {
        ia[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(t)] = rows[r][t];
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
  std::unique_ptr<SentencePieceTokenizer> tokenizer_;
  torch::jit::Module module_;
  std::size_t dimension_ = 0;
  std::string model_id_;
};

// ---- USE-lite conversion -------------------------------------------------------------------

constexpr const char* kUseLiteSource = R"TS(
def layer_norm(self, x: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
    d = x - x.mean(-1, keepdim=True)
    var = (d * d).mean(-1, keepdim=True)
    return scale * torch.rsqrt(var + self.ln_eps) * d + bias

def attention(self, h: Tensor, bias: Tensor, qkv_w: Tensor, qkv_b: Tensor, out_w: Tensor,
              out_b: Tensor, scale: Tensor, heads: int) -> Tensor:
    B = h.size(0)
    T = h.size(1)
    qkv = torch.matmul(h, qkv_w) + qkv_b
    d = qkv.size(2) // 3
    dh = d // heads
    q = qkv[:, :, 0:d].reshape(B, T, heads, dh).transpose(1, 2) * scale
    k = qkv[:, :, d:2 * d].reshape(B, T, heads, dh).transpose(1, 2)
    v = qkv[:, :, 2 * d:3 * d].reshape(B, T, heads, dh).transpose(1, 2)
    a = torch.softmax(torch.matmul(q, k.transpose(2, 3)) + bias, -1)
    o = torch.matmul(a, v).transpose(1, 2).reshape(B, T, d)
    return torch.matmul(o, out_w) + out_b

def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
    ids = ids[:, 0:128]
    valid = mask[:, 0:128].float()
    vm = valid.unsqueeze(2)
    bias = ((1.0 - valid) * -1000000000.0).unsqueeze(1).unsqueeze(1)
    T = ids.size(1)
    pos = torch.arange(T).float().unsqueeze(1) * self.inv_timescales
    signal = torch.cat([torch.sin(pos), torch.cos(pos)], 1)
    x = (2.0 * torch.embedding(self.embeddings, ids) + signal.unsqueeze(0)) * vm

    h = self.layer_norm(x, self.l0_ln_scale, self.l0_ln_bias)
    res = (torch.matmul(x, self.l0_res_w) + self.l0_res_b) * vm
    x = self.attention(h, bias, self.l0_qkv_w, self.l0_qkv_b, self.l0_out_w, self.l0_out_b,
                       self.l0_scale, 4) + res
    h = self.layer_norm(x, self.l0_ffn_ln_scale, self.l0_ffn_ln_bias)
    f = torch.relu(torch.matmul(h, self.l0_ffn_w1) + self.l0_ffn_b1)
    x = x + (torch.matmul(f, self.l0_ffn_w2) + self.l0_ffn_b2) * vm

    h = self.layer_norm(x, self.l1_ln_scale, self.l1_ln_bias)
    x = self.attention(h, bias, self.l1_qkv_w, self.l1_qkv_b, self.l1_out_w, self.l1_out_b,
                       self.l1_scale, 4) + x
    h = self.layer_norm(x, self.l1_ffn_ln_scale, self.l1_ffn_ln_bias)
    f = torch.relu(torch.matmul(h, self.l1_ffn_w1) + self.l1_ffn_b1)
    x = x + (torch.matmul(f, self.l1_ffn_w2) + self.l1_ffn_b2) * vm

    pooled = (x * vm).sum(1) / torch.clamp(valid.sum(1, keepdim=True), min=1.0)
    out = torch.tanh(torch.matmul(pooled, self.hidden_w) + self.hidden_b)
    return out * torch.rsqrt(torch.clamp((out * out).sum(1, keepdim=True), min=1e-12))
)TS";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError("cannot open '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// model.json weights manifest + shards → name → tensor.
std::map<std::string, torch::Tensor> read_tfjs_weights(const std::string& dist) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(slurp(dist + "/model.json"), ec);
  if (ec || !doc.is_object()) throw ClassifyError("'" + dist + "/model.json' is not JSON");
  const auto* manifest = doc.as_object().if_contains("weightsManifest");
  if (manifest == nullptr || !manifest->is_array())
    throw ClassifyError("'" + dist + "/model.json' has no weightsManifest");
  std::map<std::string, torch::Tensor> out;
  for (const auto& group : manifest->as_array()) {
    std::string buffer;
    for (const auto& p : group.at("paths").as_array())
      buffer += slurp(dist + "/" + std::string(p.as_string()));
    std::size_t offset = 0;
    for (const auto& w : group.at("weights").as_array()) {
      std::vector<std::int64_t> shape;
      std::int64_t count = 1;
      for (const auto& d : w.at("shape").as_array()) {
        shape.push_back(d.to_number<std::int64_t>());
        count *= shape.back();
      }
      const bool is_float = w.at("dtype").as_string() == "float32";
      const auto bytes = static_cast<std::size_t>(count) * 4;
      if (offset + bytes > buffer.size())
        throw ClassifyError("TF.js weight shards are shorter than model.json says");
      auto t = torch::from_blob(buffer.data() + offset, shape,
                                is_float ? torch::kFloat32 : torch::kInt32)
                   .clone();
      out.emplace(std::string(w.at("name").as_string()), t);
      offset += bytes;
    }
  }
  return out;
}

}  // namespace

namespace detail {

std::shared_ptr<const SentenceEncoder> load_text_model(const EncoderOptions& options,
                                                       bool normalize, std::string_view what) {
  return std::make_shared<TorchTextModel>(options, normalize, what);
}

}  // namespace detail

std::shared_ptr<const SentenceEncoder> load_sentence_encoder(const EncoderOptions& options) {
  return detail::load_text_model(options, true, "sentence encoder");
}

void convert_use_lite(const std::string& package_dist_dir, const std::string& out_dir) {
  const auto w = read_tfjs_weights(package_dist_dir);
  const std::string enc = "module_apply_default/Encoder_en/KonaTransformer/Encode/";
  auto get = [&](const std::string& name) {
    const auto it = w.find(name);
    if (it == w.end()) throw ClassifyError("USE-lite weight missing from model.json: " + name);
    return it->second;
  };
  torch::jit::Module m("UseLiteEncoder");
  auto param = [&](const std::string& name, torch::Tensor t) {
    m.register_parameter(name, t, false);
  };
  auto buffer = [&](const std::string& name, torch::Tensor t) { m.register_buffer(name, t); };
  param("embeddings", get("module/Embeddings_en"));
  buffer("inv_timescales",
         get(enc + "TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"));
  buffer(
      "ln_eps",
      get(enc +
          "TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"));
  for (int i = 0; i < 2; ++i) {
    const std::string l = "l" + std::to_string(i) + "_";
    const std::string pre = enc + "Layer_" + std::to_string(i) + "/TransformerLayer/";
    const std::string stack =
        enc + "TransformerStack/Layer_" + std::to_string(i) + "/TransformerLayer/";
    const std::string kernel = "module/Encoder_en/KonaTransformer/Encode/Layer_" +
                               std::to_string(i) + "/TransformerLayer/MultiheadAttention/";
    const std::string cc = "/ConcatPartitions/concat";
    param(l + "ln_scale", get(pre + "layer_prepostprocess/layer_norm/layer_norm_scale" + cc));
    param(l + "ln_bias", get(pre + "layer_prepostprocess/layer_norm/layer_norm_bias" + cc));
    param(l + "qkv_w", get(kernel + "qkv_transform_single/kernel/part_0")[0][0].contiguous());
    param(l + "qkv_b", get(pre + "MultiheadAttention/qkv_transform_single/bias" + cc));
    param(l + "out_w", get(kernel + "output_transform_single/kernel/part_0")[0][0].contiguous());
    param(l + "out_b", get(pre + "MultiheadAttention/output_transform_single/bias" + cc));
    buffer(l + "scale", get(stack + "MultiheadAttention/mul/y"));
    param(l + "ffn_ln_scale",
          get(pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale" + cc));
    param(l + "ffn_ln_bias", get(pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias" + cc));
    param(l + "ffn_w1", get(stack + "FFN/conv1/Tensordot/Reshape_1"));
    param(l + "ffn_b1", get(pre + "FFN/conv1/bias" + cc));
    param(l + "ffn_w2", get(stack + "FFN/conv2/Tensordot/Reshape_1"));
    param(l + "ffn_b2", get(pre + "FFN/conv2/bias" + cc));
    if (i == 0) {
      param("l0_res_w", get(pre + "dense/kernel" + cc));
      param("l0_res_b", get(pre + "dense/bias" + cc));
    }
  }
  param("hidden_w", get("module/Encoder_en/hidden_layers/tanh_layer_0/weights"));
  param("hidden_b", get("module/Encoder_en/hidden_layers/tanh_layer_0/bias"));
  try {
    m.define(kUseLiteSource);
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot compile the USE-lite TorchScript: " + torch_message(e));
  }
  std::filesystem::create_directories(out_dir);
  const std::string tokenizer =
      SentencePieceTokenizer::model_from_tfjs_vocab(package_dist_dir + "/vocab.json");
  write_file_atomically(out_dir + "/tokenizer.model", tokenizer);
  const std::string encoder = out_dir + "/encoder.pt";
  const std::string tmp = encoder + ".tmp." + std::to_string(::getpid());
  try {
    m.save(tmp);
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot write '" + tmp + "': " + torch_message(e));
  }
  std::filesystem::rename(tmp, encoder);
}

}  // namespace mcpclass::classify
