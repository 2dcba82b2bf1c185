// libtorch translation unit: head files (TorchScript module + JSON manifest) and exporting
// encoder + head as one TorchScript sequence classifier. Training is in head_training.cpp.
#include "classify/safetensors.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/learned_classifier.hpp"
#include "torch/head_model.hpp"
#include "torch/torch_files.hpp"

#include <torch/script.h>
#include <boost/json.hpp>

#include <map>

namespace mcpclass::classify {

namespace {

namespace json = boost::json;

constexpr int kHeadFormat = 2;  // 2 added the lexical part; 1 (dense only) still loads

std::vector<float> values(const torch::Tensor& t) {
  const auto c = t.to(torch::kFloat32).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

torch::Tensor tensor(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  auto t = torch::tensor(v, torch::kFloat32);
  return cols > 0 ? t.reshape({rows, cols}) : t;
}

}  // namespace

namespace detail {

HeadModel load_head(const std::string& path) {
  HeadModel head;
  boost::system::error_code ec;
  const auto doc = json::parse(slurp(path + ".json"), ec);
  if (ec || !doc.is_object()) throw ClassifyError("head manifest '" + path + ".json' is not JSON");
  const json::object* lexical = nullptr;
  try {
    const auto& m = doc.as_object();
    for (const auto& c : m.at("categories").as_array()) head.categories.emplace_back(c.as_string());
    head.temperature = m.at("temperature").to_number<double>();
    head.encoder_id = std::string(m.at("encoder_id").as_string());
    if (const auto* l = m.if_contains("lexical")) {
      lexical = &l->as_object();
      head.lexical.mix = lexical->at("mix").to_number<double>();
      head.lexical.temperature = lexical->at("temperature").to_number<double>();
      head.lexical.mix_temperature = lexical->at("mix_temperature").to_number<double>();
    }
  } catch (const std::exception& e) {
    throw ClassifyError("head manifest '" + path + ".json' is incomplete: " + e.what());
  }
  if (!(head.temperature > 0.0)) throw ClassifyError("head temperature must be positive");
  if (lexical != nullptr &&
      (!(head.lexical.temperature > 0.0) || !(head.lexical.mix_temperature > 0.0) ||
       !(head.lexical.mix >= 0.0 && head.lexical.mix <= 1.0)))
    throw ClassifyError("head manifest '" + path +
                        ".json': lexical temperatures must be positive and mix in [0, 1]");
  std::map<std::string, torch::Tensor> params;
  try {
    auto module = torch::jit::load(path, torch::kCPU);
    for (const auto& p : module.named_parameters()) params[p.name] = p.value;
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot load head '" + path + "': " + e.what_without_backtrace());
  }
  for (int l = 0; params.contains("w" + std::to_string(l)); ++l) {
    const auto& w = params.at("w" + std::to_string(l));
    const auto& b = params.at("b" + std::to_string(l));
    if (w.dim() != 2 || b.dim() != 1 || b.size(0) != w.size(0))
      throw ClassifyError("head layer " + std::to_string(l) + " has inconsistent shapes");
    DenseLayer layer;
    layer.out = static_cast<std::size_t>(w.size(0));
    layer.in = static_cast<std::size_t>(w.size(1));
    layer.weight = values(w);
    layer.bias = values(b);
    if (!head.layers.empty() && head.layers.back().out != layer.in)
      throw ClassifyError("head layers do not chain");
    head.layers.push_back(std::move(layer));
  }
  if (head.layers.empty()) throw ClassifyError("head '" + path + "' has no layers (w0, b0)");
  const auto classes = head.categories.size();
  if (head.layers.back().out != classes)
    throw ClassifyError("head '" + path + "' has " + std::to_string(head.layers.back().out) +
                        " outputs for " + std::to_string(classes) + " categories");
  if (lexical != nullptr) {
    if (!params.contains("lex_w") || !params.contains("lex_b") || !params.contains("lex_idf"))
      throw ClassifyError("head '" + path + "' has a lexical manifest but no lex_w/lex_b/lex_idf");
    const auto& w = params.at("lex_w");
    const auto& b = params.at("lex_b");
    const auto& idf = params.at("lex_idf");
    if (w.dim() != 2 || w.size(0) != static_cast<std::int64_t>(classes) || b.numel() != w.size(0) ||
        idf.numel() != w.size(1))
      throw ClassifyError("head '" + path + "' lexical part has inconsistent shapes");
    head.lexical.weight = values(w);
    head.lexical.bias = values(b);
    head.lexical.idf = values(idf);
  }
  return head;
}

void save_head(const HeadModel& head, const std::string& path, const json::object& report) {
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
  save_module(m, path);
  json::array cats;
  for (const auto& c : head.categories) cats.emplace_back(c);
  json::object manifest{{"format", lex.empty() ? 1 : kHeadFormat},
                        {"categories", cats},
                        {"encoder_id", head.encoder_id},
                        {"temperature", head.temperature},
                        {"hidden", head.layers.size() > 1 ? head.layers.front().out : 0},
                        {"report", report}};
  if (!lex.empty())
    manifest["lexical"] = {{"mix", lex.mix},
                           {"temperature", lex.temperature},
                           {"mix_temperature", lex.mix_temperature},
                           {"vocabulary", lex.idf.size()}};
  write_file_atomically(path + ".json", json::serialize(manifest));
}

}  // namespace detail

void export_sequence_classifier(const LearnedSettings& settings, const std::string& path) {
  const auto head = detail::load_head(resolve_model_path(settings.head));
  torch::jit::Module seq("SequenceClassifier");
  try {
    const auto encoder = resolve_model_path(settings.encoder);
    seq.register_module("encoder", detail::looks_like_safetensors(encoder)
                                       ? detail::use_lite_module(encoder)
                                       : torch::jit::load(encoder, torch::kCPU));
    seq.register_module("head", torch::jit::load(resolve_model_path(settings.head), torch::kCPU));
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

}  // namespace mcpclass::classify
