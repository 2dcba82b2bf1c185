// libtorch translation unit: converting the TF.js USE-lite package into TorchScript encoders
// (float32 encoder.pt and bfloat16-weight encoder-bf16.pt), the same weights as safetensors for
// the native encoder (use-lite.safetensors), plus a sentencepiece model.
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "learned/torch_plugin/torch_files.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "tokenizers/tokenizer_sentencepiece.hpp"

#include <torch/script.h>
#include <boost/json.hpp>

#include <filesystem>
#include <map>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

// One source for both variants: LINEAR(x, name) and EMBED(ids) are expanded per variant
// (expand_source), so the float32 and bfloat16 graphs cannot drift apart.
constexpr const char* kUseLiteTemplate = R"TS(
def layer_norm(self, x: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
    d = x - x.mean(-1, keepdim=True)
    var = (d * d).mean(-1, keepdim=True)
    return scale * torch.rsqrt(var + self.ln_eps) * d + bias

def attention(self, qkv: Tensor, bias: Tensor, scale: Tensor, heads: int) -> Tensor:
    B = qkv.size(0)
    T = qkv.size(1)
    d = qkv.size(2) // 3
    dh = d // heads
    q = qkv[:, :, 0:d].reshape(B, T, heads, dh).transpose(1, 2) * scale
    k = qkv[:, :, d:2 * d].reshape(B, T, heads, dh).transpose(1, 2)
    v = qkv[:, :, 2 * d:3 * d].reshape(B, T, heads, dh).transpose(1, 2)
    a = torch.softmax(torch.matmul(q, k.transpose(2, 3)) + bias, -1)
    return torch.matmul(a, v).transpose(1, 2).reshape(B, T, d)

def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
    ids = ids[:, 0:128]
    valid = mask[:, 0:128].float()
    vm = valid.unsqueeze(2)
    bias = ((1.0 - valid) * -1000000000.0).unsqueeze(1).unsqueeze(1)
    T = ids.size(1)
    pos = torch.arange(T).float().unsqueeze(1) * self.inv_timescales
    signal = torch.cat([torch.sin(pos), torch.cos(pos)], 1)
    x = (2.0 * EMBED(ids) + signal.unsqueeze(0)) * vm

    h = self.layer_norm(x, self.l0_ln_scale, self.l0_ln_bias)
    res = LINEAR(x, l0_res) * vm
    x = LINEAR(self.attention(LINEAR(h, l0_qkv), bias, self.l0_scale, 4), l0_out) + res
    h = self.layer_norm(x, self.l0_ffn_ln_scale, self.l0_ffn_ln_bias)
    x = x + LINEAR(torch.relu(LINEAR(h, l0_ffn1)), l0_ffn2) * vm

    h = self.layer_norm(x, self.l1_ln_scale, self.l1_ln_bias)
    x = LINEAR(self.attention(LINEAR(h, l1_qkv), bias, self.l1_scale, 4), l1_out) + x
    h = self.layer_norm(x, self.l1_ffn_ln_scale, self.l1_ffn_ln_bias)
    x = x + LINEAR(torch.relu(LINEAR(h, l1_ffn1)), l1_ffn2) * vm

    pooled = (x * vm).sum(1) / torch.clamp(valid.sum(1, keepdim=True), min=1.0)
    out = torch.tanh(torch.matmul(pooled, self.hidden_w) + self.hidden_b)
    return out * torch.rsqrt(torch.clamp((out * out).sum(1, keepdim=True), min=1e-12))
)TS";

// bf16: the linear layers multiply in bfloat16 (oneDNN's AVX-512 BF16 kernels: ~3x the float32
// throughput here, half the weight memory) and accumulate, add the bias and continue in float32;
// the embedding table is stored in bfloat16. Layer norms, attention and pooling stay float32.
std::string expand_source(bool bf16) {
  std::string s = kUseLiteTemplate;
  // LINEAR(arg, name): the innermost-last scan finds the call's closing parenthesis by depth, so
  // arg may itself hold calls and LINEARs.
  for (std::size_t at; (at = s.rfind("LINEAR(")) != std::string::npos;) {
    const std::size_t open = at + 6;
    std::size_t close = open;
    std::size_t comma = std::string::npos;
    for (int depth = 0; close < s.size(); ++close) {
      if (s[close] == '(') ++depth;
      if (s[close] == ')' && --depth == 0) break;
      if (s[close] == ',' && depth == 1) comma = close;
    }
    const std::string arg = s.substr(open + 1, comma - open - 1);
    const std::string w = "self." + s.substr(comma + 2, close - comma - 2);
    s.replace(at, close + 1 - at,
              bf16 ? "(torch.matmul((" + arg + ").type_as(" + w + "_w), " + w + "_w).float() + " +
                         w + "_b)"
                   : "(torch.matmul(" + arg + ", " + w + "_w) + " + w + "_b)");
  }
  const std::string marker = "EMBED(ids)";
  s.replace(s.find(marker), marker.size(),
            bf16 ? "torch.embedding(self.embeddings, ids).float()"
                 : "torch.embedding(self.embeddings, ids)");
  return s;
}

// model.json weights manifest + shards → name → tensor.
std::map<std::string, torch::Tensor> read_tfjs_weights(const std::string& dist) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(detail::slurp(dist + "/model.json"), ec);
  if (ec || !doc.is_object()) throw ClassifyError("'" + dist + "/model.json' is not JSON");
  const auto* manifest = doc.as_object().if_contains("weightsManifest");
  if (manifest == nullptr || !manifest->is_array())
    throw ClassifyError("'" + dist + "/model.json' has no weightsManifest");
  std::map<std::string, torch::Tensor> out;
  for (const auto& group : manifest->as_array()) {
    std::string buffer;
    for (const auto& p : group.at("paths").as_array())
      buffer += detail::slurp(dist + "/" + std::string(p.as_string()));
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

// The USE-lite tensors under the template's names; linear weights as [in, out] (x·W).
struct UseLiteWeights {
  std::map<std::string, torch::Tensor> linear_w, linear_b, other;
};

UseLiteWeights use_lite_weights(const std::string& dist) {
  const auto w = read_tfjs_weights(dist);
  const std::string enc = "module_apply_default/Encoder_en/KonaTransformer/Encode/";
  auto get = [&](const std::string& name) {
    const auto it = w.find(name);
    if (it == w.end()) throw ClassifyError("USE-lite weight missing from model.json: " + name);
    return it->second;
  };
  UseLiteWeights out;
  auto linear = [&](const std::string& name, torch::Tensor weight, torch::Tensor bias) {
    out.linear_w[name] = weight.contiguous();
    out.linear_b[name] = bias;
  };
  out.other["embeddings"] = get("module/Embeddings_en");
  out.other["inv_timescales"] =
      get(enc + "TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1");
  out.other["ln_eps"] = get(
      enc + "TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x");
  for (int i = 0; i < 2; ++i) {
    const std::string l = "l" + std::to_string(i) + "_";
    const std::string pre = enc + "Layer_" + std::to_string(i) + "/TransformerLayer/";
    const std::string stack =
        enc + "TransformerStack/Layer_" + std::to_string(i) + "/TransformerLayer/";
    const std::string kernel = "module/Encoder_en/KonaTransformer/Encode/Layer_" +
                               std::to_string(i) + "/TransformerLayer/MultiheadAttention/";
    const std::string cc = "/ConcatPartitions/concat";
    out.other[l + "ln_scale"] = get(pre + "layer_prepostprocess/layer_norm/layer_norm_scale" + cc);
    out.other[l + "ln_bias"] = get(pre + "layer_prepostprocess/layer_norm/layer_norm_bias" + cc);
    linear(l + "qkv", get(kernel + "qkv_transform_single/kernel/part_0")[0][0],
           get(pre + "MultiheadAttention/qkv_transform_single/bias" + cc));
    linear(l + "out", get(kernel + "output_transform_single/kernel/part_0")[0][0],
           get(pre + "MultiheadAttention/output_transform_single/bias" + cc));
    out.other[l + "scale"] = get(stack + "MultiheadAttention/mul/y");
    out.other[l + "ffn_ln_scale"] =
        get(pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale" + cc);
    out.other[l + "ffn_ln_bias"] =
        get(pre + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias" + cc);
    linear(l + "ffn1", get(stack + "FFN/conv1/Tensordot/Reshape_1"),
           get(pre + "FFN/conv1/bias" + cc));
    linear(l + "ffn2", get(stack + "FFN/conv2/Tensordot/Reshape_1"),
           get(pre + "FFN/conv2/bias" + cc));
    if (i == 0) linear("l0_res", get(pre + "dense/kernel" + cc), get(pre + "dense/bias" + cc));
  }
  out.other["hidden_w"] = get("module/Encoder_en/hidden_layers/tanh_layer_0/weights");
  out.other["hidden_b"] = get("module/Encoder_en/hidden_layers/tanh_layer_0/bias");
  return out;
}

bool is_buffer(const std::string& name) {
  return name == "inv_timescales" || name == "ln_eps" || name == "l0_scale" || name == "l1_scale";
}

torch::jit::Module build_module(const UseLiteWeights& w, bool bf16) {
  torch::jit::Module m(bf16 ? "UseLiteEncoderBf16" : "UseLiteEncoder");
  for (const auto& [name, t] : w.other) {
    if (is_buffer(name))
      m.register_buffer(name, t);
    else
      m.register_parameter(name, bf16 && name == "embeddings" ? t.to(torch::kBFloat16) : t, false);
  }
  for (const auto& [name, weight] : w.linear_w) {
    m.register_parameter(name + "_w", bf16 ? weight.to(torch::kBFloat16) : weight, false);
    m.register_parameter(name + "_b", w.linear_b.at(name), false);
  }
  try {
    m.define(expand_source(bf16));
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot compile the USE-lite TorchScript: " +
                        std::string(e.what_without_backtrace()));
  }
  return m;
}

// The same weights for the native encoder (use_lite_native_encoder.cpp): float32, TF.js names
// mapped as in the TorchScript module, linear weights [in, out].
checkpoint::SafeTensors safetensors_of(const UseLiteWeights& w) {
  checkpoint::SafeTensors out;
  out.metadata["architecture"] = "use-lite";
  auto put = [&](const std::string& name, const torch::Tensor& t) {
    const auto f = t.to(torch::kFloat32).contiguous();
    checkpoint::SafeTensor st;
    st.shape.assign(f.sizes().begin(), f.sizes().end());
    st.values.assign(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
    out.tensors[name] = std::move(st);
  };
  for (const auto& [name, t] : w.other) put(name, t);
  for (const auto& [name, t] : w.linear_w) put(name + "_w", t);
  for (const auto& [name, t] : w.linear_b) put(name + "_b", t);
  return out;
}

}  // namespace

namespace detail {

torch::jit::Module use_lite_module(const std::string& safetensors_path) {
  const auto file = checkpoint::read_safetensors(safetensors_path);
  UseLiteWeights w;
  auto from = [](const checkpoint::SafeTensor& t) {
    return torch::from_blob(const_cast<float*>(t.values.data()), t.shape, torch::kFloat32).clone();
  };
  for (const auto& [name, t] : file.tensors) {
    const auto suffix = name.size() > 2 ? name.substr(name.size() - 2) : "";
    const auto base = name.substr(0, name.size() - 2);
    if (suffix == "_w" && name != "hidden_w")
      w.linear_w[base] = from(t);
    else if (suffix == "_b" && name != "hidden_b")
      w.linear_b[base] = from(t);
    else
      w.other[name] = from(t);
  }
  return build_module(w, false);
}

}  // namespace detail

void convert_use_lite(const std::string& package_dist_dir, const std::string& out_dir) {
  const auto weights = use_lite_weights(package_dist_dir);
  std::filesystem::create_directories(out_dir);
  const std::string tokenizer =
      tokenizers::SentencePieceTokenizer::model_from_tfjs_vocab(package_dist_dir + "/vocab.json");
  write_file_atomically(out_dir + "/tokenizer.model", tokenizer);
  auto fp32 = build_module(weights, false);
  detail::save_module(fp32, out_dir + "/encoder.pt");
  auto bf16 = build_module(weights, true);
  detail::save_module(bf16, out_dir + "/encoder-bf16.pt");
  detail::write_safetensors(out_dir + "/use-lite.safetensors", safetensors_of(weights));
}

}  // namespace mcpclass::learned
