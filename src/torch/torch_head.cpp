// libtorch translation unit 2 of 2: training softmax heads on frozen embeddings, reading them
// back, and exporting encoder + head as one TorchScript sequence classifier.
#include "mcpclass/classify/embedding_encoder.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/learned_classifier.hpp"
#include "torch/head_model.hpp"

#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/script.h>
#include <boost/json.hpp>

#include <ATen/CPUGeneratorImpl.h>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace mcpclass::classify {

namespace {

namespace json = boost::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError("cannot open '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void save_module(torch::jit::Module& m, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::path(path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    m.save(tmp);
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot write '" + tmp + "': " + e.what_without_backtrace());
  }
  std::filesystem::rename(tmp, path);
}

// Embeddings of `texts`, cached under the cache dir by encoder and text checksums.
std::vector<float> cached_embeddings(const SentenceEncoder& encoder,
                                     const std::vector<std::string>& texts,
                                     const LearnedProgress& progress) {
  std::string all;
  for (const auto& t : texts) all += t + '\x1f';
  const std::string path =
      learned_cache_dir() + "/embeddings/" + text_checksum(encoder.model_id() + all) + ".f32";
  const std::size_t bytes = texts.size() * encoder.dimension() * sizeof(float);
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == bytes && !ec) {
    std::vector<float> out(texts.size() * encoder.dimension());
    std::ifstream in(path, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(bytes))) {
      if (progress) progress(texts.size(), texts.size());
      return out;
    }
  }
  auto out = encoder.encode(texts, progress);
  write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(out.data()), bytes));
  return out;
}

double expected_calibration_error(const torch::Tensor& probs, const torch::Tensor& labels) {
  constexpr int kBins = 15;
  const auto [conf, pred] = probs.max(1);
  const auto correct = pred.eq(labels).to(torch::kFloat64);
  const auto c = conf.to(torch::kFloat64);
  double ece = 0.0;
  const double n = static_cast<double>(labels.size(0));
  for (int b = 0; b < kBins; ++b) {
    const double lo = static_cast<double>(b) / kBins;
    const double hi = static_cast<double>(b + 1) / kBins;
    const auto in_bin = c.gt(lo).logical_and(c.le(hi));
    const double count = in_bin.sum().item<double>();
    if (count == 0) continue;
    const double acc = correct.masked_select(in_bin).mean().item<double>();
    const double avg = c.masked_select(in_bin).mean().item<double>();
    ece += count / n * std::abs(acc - avg);
  }
  return ece;
}

std::uint64_t salted_hash(const std::string& id) {
  return std::stoull(text_checksum("validation:" + id), nullptr, 16);
}

}  // namespace

namespace detail {

HeadModel load_head(const std::string& path) {
  HeadModel head;
  boost::system::error_code ec;
  const auto doc = json::parse(slurp(path + ".json"), ec);
  if (ec || !doc.is_object()) throw ClassifyError("head manifest '" + path + ".json' is not JSON");
  try {
    const auto& m = doc.as_object();
    for (const auto& c : m.at("categories").as_array()) head.categories.emplace_back(c.as_string());
    head.temperature = m.at("temperature").to_number<double>();
    head.encoder_id = std::string(m.at("encoder_id").as_string());
  } catch (const std::exception& e) {
    throw ClassifyError("head manifest '" + path + ".json' is incomplete: " + e.what());
  }
  if (!(head.temperature > 0.0)) throw ClassifyError("head temperature must be positive");
  try {
    auto module = torch::jit::load(path, torch::kCPU);
    std::map<std::string, torch::Tensor> params;
    for (const auto& p : module.named_parameters())
      params[p.name] = p.value.to(torch::kFloat32).contiguous();
    for (int l = 0; params.contains("w" + std::to_string(l)); ++l) {
      const auto w = params.at("w" + std::to_string(l));
      const auto b = params.at("b" + std::to_string(l));
      if (w.dim() != 2 || b.dim() != 1 || b.size(0) != w.size(0))
        throw ClassifyError("head layer " + std::to_string(l) + " has inconsistent shapes");
      DenseLayer layer;
      layer.out = static_cast<std::size_t>(w.size(0));
      layer.in = static_cast<std::size_t>(w.size(1));
      layer.weight.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
      layer.bias.assign(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
      if (!head.layers.empty() && head.layers.back().out != layer.in)
        throw ClassifyError("head layers do not chain");
      head.layers.push_back(std::move(layer));
    }
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot load head '" + path + "': " + e.what_without_backtrace());
  }
  if (head.layers.empty()) throw ClassifyError("head '" + path + "' has no layers (w0, b0)");
  if (head.layers.back().out != head.categories.size())
    throw ClassifyError("head '" + path + "' has " + std::to_string(head.layers.back().out) +
                        " outputs for " + std::to_string(head.categories.size()) + " categories");
  return head;
}

}  // namespace detail

HeadTrainingReport train_head(const CategorySet& categories, const LearnedSettings& settings,
                              const std::vector<LabelledExample>& examples,
                              const std::string& head_path, const HeadTrainingOptions& options,
                              const LearnedProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  const auto encoder = load_sentence_encoder({resolve_model_path(settings.encoder),
                                              resolve_model_path(settings.tokenizer),
                                              settings.max_tokens, 32, settings.threads});
  std::vector<std::string> texts;
  std::vector<std::int64_t> labels;
  std::vector<bool> validation;
  for (const auto& e : examples) {
    const auto c = categories.index_of(e.category);
    if (!c) throw ClassifyError("training example has unknown category '" + e.category + "'");
    texts.push_back(e.text);
    labels.push_back(static_cast<std::int64_t>(*c));
    validation.push_back(salted_hash(e.id) % 100 < options.validation_percent);
  }
  if (texts.empty()) throw ClassifyError("no training examples");
  const auto vectors = cached_embeddings(*encoder, texts, progress);
  const auto n = static_cast<std::int64_t>(texts.size());
  const auto d = static_cast<std::int64_t>(encoder->dimension());
  const auto classes = static_cast<std::int64_t>(categories.size());

  at::set_num_threads(1);  // small matrices: extra threads only spin
  auto x_all =
      torch::from_blob(const_cast<float*>(vectors.data()), {n, d}, torch::kFloat32).clone();
  auto y_all = torch::tensor(labels, torch::kInt64);
  std::vector<std::int64_t> train_idx;
  std::vector<std::int64_t> val_idx;
  for (std::int64_t i = 0; i < n; ++i)
    (validation[static_cast<std::size_t>(i)] ? val_idx : train_idx).push_back(i);
  if (train_idx.empty()) throw ClassifyError("no training rows left after the validation split");
  if (val_idx.empty()) val_idx = train_idx;  // tiny sets: calibrate on the training rows
  const auto xt = x_all.index_select(0, torch::tensor(train_idx));
  const auto yt = y_all.index_select(0, torch::tensor(train_idx));
  const auto xv = x_all.index_select(0, torch::tensor(val_idx));
  const auto yv = y_all.index_select(0, torch::tensor(val_idx));

  auto gen = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  std::vector<torch::Tensor> params;
  const std::int64_t hidden = static_cast<std::int64_t>(options.hidden);
  std::vector<std::int64_t> widths{d};
  if (hidden > 0) widths.push_back(hidden);
  widths.push_back(classes);
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    auto w = torch::empty({widths[l + 1], widths[l]})
                 .normal_(0.0, 1.0 / std::sqrt(static_cast<double>(widths[l])), gen);
    params.push_back(w.requires_grad_());
    params.push_back(torch::zeros({widths[l + 1]}).requires_grad_());
  }
  auto forward = [&](const torch::Tensor& x) {
    auto h = x;
    for (std::size_t l = 0; l < params.size(); l += 2) {
      h = torch::matmul(h, params[l].t()) + params[l + 1];
      if (l + 2 < params.size()) h = torch::relu(h);
    }
    return h;
  };
  torch::optim::Adam optimizer(
      params, torch::optim::AdamOptions(options.learning_rate).weight_decay(options.weight_decay));
  constexpr std::int64_t kBatch = 128;
  const std::int64_t rows = xt.size(0);
  for (std::size_t epoch = 0; epoch < options.epochs; ++epoch) {
    const auto perm = torch::randperm(rows, gen, torch::kInt64);
    for (std::int64_t s = 0; s < rows; s += kBatch) {
      const auto idx = perm.slice(0, s, std::min(rows, s + kBatch));
      optimizer.zero_grad();
      const auto loss =
          torch::cross_entropy_loss(forward(xt.index_select(0, idx)), yt.index_select(0, idx));
      loss.backward();
      optimizer.step();
    }
  }

  HeadTrainingReport report;
  report.train_rows = static_cast<std::size_t>(rows);
  report.validation_rows = static_cast<std::size_t>(xv.size(0));
  {
    torch::NoGradGuard no_grad;
    const auto logits = forward(xv);
    // Temperature scaling: the T minimising validation NLL on a log grid.
    double best_nll = INFINITY;
    for (double t = 0.25; t <= 8.0; t *= 1.05) {
      const double nll = torch::cross_entropy_loss(logits / t, yv).item<double>();
      if (nll < best_nll) {
        best_nll = nll;
        report.temperature = t;
      }
    }
    const auto probs = torch::softmax(logits / report.temperature, 1);
    report.validation_accuracy = probs.argmax(1).eq(yv).to(torch::kFloat64).mean().item<double>();
    report.validation_ece = expected_calibration_error(probs, yv);
  }

  torch::jit::Module head("Head");
  std::string body = "def forward(self, x: Tensor) -> Tensor:\n    h = x\n";
  for (std::size_t l = 0; l < params.size(); l += 2) {
    const std::string i = std::to_string(l / 2);
    head.register_parameter("w" + i, params[l].detach().clone(), false);
    head.register_parameter("b" + i, params[l + 1].detach().clone(), false);
    body += "    h = torch.matmul(h, self.w" + i + ".t()) + self.b" + i + "\n";
    if (l + 2 < params.size()) body += "    h = torch.relu(h)\n";
  }
  body += "    return h\n";
  head.define(body);
  save_module(head, head_path);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  json::array cats;
  for (const auto& c : categories) cats.emplace_back(c.name);
  const json::object manifest{{"format", 1},
                              {"categories", cats},
                              {"encoder_id", encoder->model_id()},
                              {"temperature", report.temperature},
                              {"hidden", options.hidden},
                              {"report",
                               {{"train_rows", report.train_rows},
                                {"validation_rows", report.validation_rows},
                                {"validation_accuracy", report.validation_accuracy},
                                {"validation_ece", report.validation_ece},
                                {"epochs", options.epochs},
                                {"learning_rate", options.learning_rate},
                                {"weight_decay", options.weight_decay},
                                {"seed", options.seed}}}};
  write_file_atomically(head_path + ".json", json::serialize(manifest));
  return report;
}

void export_sequence_classifier(const LearnedSettings& settings, const std::string& path) {
  const auto head = detail::load_head(resolve_model_path(settings.head));
  torch::jit::Module seq("SequenceClassifier");
  try {
    seq.register_module("encoder",
                        torch::jit::load(resolve_model_path(settings.encoder), torch::kCPU));
    seq.register_module("head", torch::jit::load(resolve_model_path(settings.head), torch::kCPU));
    seq.register_buffer("temperature", torch::tensor(head.temperature, torch::kFloat32));
    seq.define(R"TS(
def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
    e = self.encoder.forward(ids, mask)
    e = e / torch.clamp(e.norm(2, 1, True), min=1e-12)
    return self.head.forward(e) / self.temperature
)TS");
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot build the sequence classifier: " +
                        std::string(e.what_without_backtrace()));
  }
  save_module(seq, path);
  std::string labels;
  for (const auto& c : head.categories) labels += c + "\n";
  write_file_atomically(path + ".labels", labels);
}

}  // namespace mcpclass::classify
