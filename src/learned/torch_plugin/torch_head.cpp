// libtorch translation unit: TorchScript head modules (read by head_files.cpp through the plugin)
// and exporting encoder + head as one TorchScript sequence classifier. Training is in
// head_training.cpp.
#include "checkpoint/safetensors.hpp"
#include "learned/head_model.hpp"
#include "learned/torch_plugin/plugin_impl.hpp"
#include "learned/torch_plugin/torch_files.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

#include <torch/script.h>

#include <map>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

torch::Tensor tensor(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  auto t = torch::tensor(v, torch::kFloat32);
  return cols > 0 ? t.reshape({rows, cols}) : t;
}

// forward(e) = the dense logits of head_model.hpp; the lexical tensors ride along as parameters.
torch::jit::Module head_module(const detail::HeadModel& head) {
  torch::jit::Module m("Head");
  std::string body = "def forward(self, x: Tensor) -> Tensor:\n    h = x\n";
  for (std::size_t l = 0; l < head.layers.size(); ++l) {
    const auto& layer = head.layers[l];
    const std::string i = std::to_string(l);
    m.register_parameter("w" + i,
                         tensor(layer.weight, static_cast<std::int64_t>(layer.out),
                                static_cast<std::int64_t>(layer.in)),
                         false);
    m.register_parameter("b" + i, tensor(layer.bias, 0, 0), false);
    body += "    h = torch.matmul(h, self.w" + i + ".t()) + self.b" + i + "\n";
    if (l + 1 < head.layers.size()) body += "    h = torch.relu(h)\n";
  }
  body += "    return h\n";
  const auto& lex = head.lexical;
  if (!lex.empty()) {
    const auto vocabulary = static_cast<std::int64_t>(lex.idf.size());
    m.register_parameter("lex_w", tensor(lex.weight, -1, vocabulary), false);
    m.register_parameter("lex_b", tensor(lex.bias, 0, 0), false);
    m.register_parameter("lex_idf", tensor(lex.idf, 0, 0), false);
  }
  try {
    m.define(body);
  } catch (const c10::Error& e) {
    throw ClassifyError(std::string("cannot build the head module: ") + e.what_without_backtrace());
  }
  return m;
}

}  // namespace

namespace detail {

std::map<std::string, checkpoint::SafeTensor> read_torchscript_head(const std::string& path) {
  std::map<std::string, checkpoint::SafeTensor> out;
  try {
    auto module = torch::jit::load(path, torch::kCPU);
    for (const auto& p : module.named_parameters()) {
      const auto c = p.value.detach().to(torch::kFloat32).contiguous();
      out[p.name] = {c.sizes().vec(), {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()}};
    }
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot load head '" + path + "': " + e.what_without_backtrace());
  }
  return out;
}

void write_torchscript_head(const HeadModel& head, const std::string& path) {
  auto m = head_module(head);
  save_module(m, path);
}

}  // namespace detail

void export_sequence_classifier(const LearnedSettings& settings, const std::string& path) {
  // The head as data, so either head format (safetensors or TorchScript) exports.
  const auto head = detail::load_head(resolve_model_path(settings.head));
  torch::jit::Module seq("SequenceClassifier");
  try {
    const auto encoder = resolve_model_path(settings.encoder);
    seq.register_module("encoder", checkpoint::looks_like_safetensors(encoder)
                                       ? detail::use_lite_module(encoder)
                                       : torch::jit::load(encoder, torch::kCPU));
    seq.register_module("head", head_module(head));
    seq.register_buffer("temperature", torch::tensor(head.temperature, torch::kFloat32));
    std::string source = R"TS(
def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
    e = self.encoder.forward(ids, mask)
    e = e / torch.clamp(e.norm(2, 1, True), min=1e-12)
    p = torch.softmax(self.head.forward(e) / self.temperature, 1)
)TS";
    if (!head.lexical.empty()) {
      // The lexical part of head_model.hpp's formula, over the same (truncated) ids.
      seq.register_buffer("lex_temperature",
                          torch::tensor(head.lexical.temperature, torch::kFloat32));
      seq.register_buffer("lex_mix", torch::tensor(head.lexical.mix, torch::kFloat32));
      seq.register_buffer("mix_temperature",
                          torch::tensor(head.lexical.mix_temperature, torch::kFloat32));
      source += R"TS(
    idf = self.head.lex_idf
    counts = torch.zeros(ids.size(0), idf.size(0)).scatter_add_(1, torch.clamp(ids, 0, idf.size(0) - 1), mask.float())
    x = torch.log1p(counts) * idf
    x = x / torch.clamp(x.norm(2, 1, True), min=1e-9)
    pl = torch.softmax((torch.matmul(x, self.head.lex_w.t()) + self.head.lex_b) / self.lex_temperature, 1)
    p = torch.softmax(torch.log(torch.clamp((1.0 - self.lex_mix) * p + self.lex_mix * pl, min=1e-30)) / self.mix_temperature, 1)
)TS";
    }
    source += "    return torch.log(torch.clamp(p, min=1e-30))\n";
    seq.define(source);
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot build the sequence classifier: " +
                        std::string(e.what_without_backtrace()));
  }
  detail::save_module(seq, path);
  std::string labels;
  for (const auto& c : head.categories) labels += c + "\n";
  write_file_atomically(path + ".labels", labels);
}

}  // namespace mcpclass::learned
