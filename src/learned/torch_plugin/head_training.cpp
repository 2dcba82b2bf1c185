// libtorch translation unit: fitting a head on frozen encoder embeddings (`mcpclass train`): the
// dense MLP part and, optionally, the lexical part of head_model.hpp's formula, each calibrated
// by temperature scaling on a hashed validation part of the training rows.
#include "learned/head_model.hpp"
#include "learned/text_crops.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/script.h>
#include <boost/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace mcpclass::learned {

using classify::CategorySet;
using classify::ClassifyError;

namespace {

namespace json = boost::json;

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

// The T minimising validation NLL of softmax(logits / T), on a log grid.
double calibrate(const torch::Tensor& logits, const torch::Tensor& labels) {
  double best_nll = INFINITY;
  double best = 1.0;
  for (double t = 0.1; t <= 8.0; t *= 1.05) {
    const double nll = torch::cross_entropy_loss(logits / t, labels).item<double>();
    if (nll < best_nll) {
      best_nll = nll;
      best = t;
    }
  }
  return best;
}

// Epochs done over every part a head trains, reported through options.on_epoch.
struct EpochCounter {
  const HeadTrainingOptions& options;
  std::size_t done = 0;
  std::size_t total = 0;

  void epoch_done(double loss) {
    ++done;
    if (options.on_epoch) options.on_epoch({done, total, loss});
  }
};

// Adam over shuffled mini-batches of `rows` rows; `loss(idx)` is the batch loss.
template <typename Loss>
void fit(std::vector<torch::Tensor> params, std::int64_t rows, std::size_t epochs, double lr,
         double weight_decay, at::Generator& gen, EpochCounter& counter, Loss loss) {
  constexpr std::int64_t kBatch = 128;
  torch::optim::Adam optimizer(params, torch::optim::AdamOptions(lr).weight_decay(weight_decay));
  for (std::size_t epoch = 0; epoch < epochs; ++epoch) {
    const auto perm = torch::randperm(rows, gen, torch::kInt64);
    double sum = 0.0;
    for (std::int64_t s = 0; s < rows; s += kBatch) {
      optimizer.zero_grad();
      const auto idx = perm.slice(0, s, std::min(rows, s + kBatch));
      const torch::Tensor l = loss(idx);
      l.backward();
      optimizer.step();
      sum += l.item<double>() * static_cast<double>(idx.size(0));
    }
    counter.epoch_done(rows > 0 ? sum / static_cast<double>(rows) : 0.0);
  }
}

// Dense [rows(idx), vocabulary] batch of the tf-idf vectors `bags`.
torch::Tensor dense_bags(const std::vector<std::vector<std::pair<std::size_t, double>>>& bags,
                         const torch::Tensor& idx, std::int64_t vocabulary) {
  auto out = torch::zeros({idx.size(0), vocabulary});
  auto a = out.accessor<float, 2>();
  const auto* rows = idx.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < idx.size(0); ++r)
    for (const auto& [id, v] : bags[static_cast<std::size_t>(rows[r])])
      a[r][static_cast<std::int64_t>(id)] = static_cast<float>(v);
  return out;
}

// idf_v = ln((1 + N) / (1 + df_v)) + 1 over the N texts in `tokens`.
std::vector<float> inverse_document_frequency(const std::vector<std::vector<std::int32_t>>& tokens,
                                              std::size_t vocabulary) {
  std::vector<double> df(vocabulary, 0.0);
  for (const auto& t : tokens) {
    std::vector<std::int32_t> u(t);
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    for (const auto id : u)
      if (id >= 0 && static_cast<std::size_t>(id) < vocabulary)
        df[static_cast<std::size_t>(id)] += 1;
  }
  std::vector<float> idf(vocabulary);
  const double n = static_cast<double>(tokens.size());
  for (std::size_t v = 0; v < vocabulary; ++v)
    idf[v] = static_cast<float>(std::log((1.0 + n) / (1.0 + df[v])) + 1.0);
  return idf;
}

std::vector<float> tensor_values(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kFloat32).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// Mean similarity of each unit row of `prototypes` to its k nearest others (ScopeModel::density),
// a block of rows at a time: the full similarity matrix of 8,192 rows would take 256 MiB.
torch::Tensor prototype_density(const torch::Tensor& prototypes, std::int64_t k) {
  constexpr std::int64_t kBlock = 1024;
  const auto n = prototypes.size(0);
  const auto neighbours = std::min(k + 1, n);
  std::vector<torch::Tensor> parts;
  for (std::int64_t i = 0; i < n; i += kBlock) {
    const auto sims =
        torch::matmul(prototypes.slice(0, i, std::min(i + kBlock, n)), prototypes.t());
    const auto top = std::get<0>(sims.topk(neighbours, 1));
    // The nearest is the row itself; with a single prototype there is no other.
    parts.push_back(neighbours > 1 ? top.slice(1, 1, neighbours).mean(1) : top.select(1, 0));
  }
  return torch::cat(parts);
}

// The head's out-of-scope score (head_model.hpp ScopeModel): prototypes from the training rows
// `xt` (those `usable`), quantiles of the validation rows' scores (those `usable_val`), whose
// head distribution is `val_probs`.
detail::ScopeModel fit_scope(const torch::Tensor& xt, const std::vector<bool>& usable,
                             const torch::Tensor& yt, const torch::Tensor& xv,
                             const std::vector<bool>& usable_val, const torch::Tensor& val_probs,
                             const CategorySet& categories, const HeadTrainingOptions& options) {
  constexpr std::int64_t kQuantiles = 101;
  detail::ScopeModel scope;
  if (options.scope == "none") return scope;
  if (options.scope != "rows" && options.scope != "centroids")
    throw ClassifyError("scope must be rows, centroids or none, not '" + options.scope + "'");
  if (!options.scope_catchall.empty()) {
    const auto c = categories.index_of(options.scope_catchall);
    if (!c)
      throw ClassifyError("scope catch-all '" + options.scope_catchall + "' is not a category");
    scope.catchall = *c;
    scope.catchall_weight = options.scope_catchall_weight;
  }
  std::vector<std::int64_t> rows;
  for (std::size_t i = 0; i < usable.size(); ++i)
    if (usable[i]) rows.push_back(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> val;
  for (std::size_t i = 0; i < usable_val.size(); ++i)
    if (usable_val[i]) val.push_back(static_cast<std::int64_t>(i));
  if (rows.empty() || val.size() < 2) return scope;
  torch::NoGradGuard no_grad;
  const auto unit = [](const torch::Tensor& x) { return x / x.norm(2, 1, true).clamp_min(1e-12); };
  const auto train = unit(xt.index_select(0, torch::tensor(rows)));
  torch::Tensor prototypes;
  if (options.scope == "centroids") {
    const auto labels = yt.index_select(0, torch::tensor(rows));
    std::vector<torch::Tensor> means;
    for (std::int64_t c = 0; c < static_cast<std::int64_t>(categories.size()); ++c) {
      const auto mask = labels.eq(c);
      if (mask.any().item<bool>()) means.push_back(train.index({mask}).mean(0));
    }
    prototypes = unit(torch::stack(means));
    scope.k = 1;
  } else {
    // An even stride over the rows (in file order, so every source keeps its share).
    const auto cap = static_cast<std::int64_t>(std::max<std::size_t>(options.scope_rows, 1));
    const auto n = train.size(0);
    prototypes =
        n <= cap
            ? train
            : train.index_select(
                  0, torch::linspace(0, static_cast<double>(n - 1), cap).round().to(torch::kInt64));
    scope.k = std::max<std::size_t>(options.scope_k, 1);
    const auto width = static_cast<std::int64_t>(options.scope_dimensions);
    if (width > 0 && width < prototypes.size(1) && width < prototypes.size(0)) {
      // The prototypes' top principal directions (uncentred: cosine similarity is about
      // directions from the origin), from the eigenvectors of their Gram matrix, largest last.
      const auto gram = torch::matmul(prototypes.t(), prototypes).to(torch::kFloat64);
      const auto vectors = std::get<1>(at::linalg_eigh(gram, "L"));
      const auto projection =
          vectors.slice(1, vectors.size(1) - width).flip(1).t().to(torch::kFloat32);
      prototypes = unit(torch::matmul(prototypes, projection.t()));
      scope.projection = tensor_values(projection.contiguous());
    }
    if (options.scope_density != 0.0) {
      scope.density =
          tensor_values(prototype_density(prototypes, static_cast<std::int64_t>(scope.k)));
      scope.density_weight = options.scope_density;
    }
  }
  scope.method = options.scope;
  scope.input = static_cast<std::size_t>(xv.size(1));
  scope.dimension = static_cast<std::size_t>(prototypes.size(1));
  scope.prototypes = tensor_values(prototypes.contiguous());
  // The validation rows scored by the code that scores texts when serving, so the quantiles
  // and the scores they calibrate are the same function.
  const auto val_index = torch::tensor(val);
  const auto queries = xv.index_select(0, val_index).contiguous();
  const auto p = val_probs.index_select(0, val_index).to(torch::kFloat64).contiguous();
  const auto d = static_cast<std::size_t>(queries.size(1));
  const auto classes = static_cast<std::size_t>(p.size(1));
  std::vector<double> scores(val.size());
  for (std::size_t i = 0; i < scores.size(); ++i)
    scores[i] = scope.score({queries.data_ptr<float>() + i * d, d},
                            {p.data_ptr<double>() + i * classes, classes});
  const auto q = torch::quantile(torch::tensor(scores, torch::kFloat64),
                                 torch::linspace(0.0, 1.0, kQuantiles, torch::kFloat64));
  scope.quantiles = tensor_values(q);
  return scope;
}

}  // namespace

HeadTrainingReport train_head(const CategorySet& categories, const LearnedSettings& settings,
                              const std::vector<LabelledExample>& examples,
                              const std::string& head_path, const HeadTrainingOptions& options,
                              const LearnedProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  if (!(options.label_smoothing >= 0.0 && options.label_smoothing < 1.0))
    throw ClassifyError("label smoothing must be in [0, 1)");
  if (!(options.lexical_mix >= 0.0 && options.lexical_mix <= 1.0))
    throw ClassifyError("lexical mix must be in [0, 1]");
  const auto encoder = load_sentence_encoder({resolve_model_path(settings.encoder),
                                              resolve_model_path(settings.tokenizer),
                                              settings.max_tokens, 32, settings.threads});
  // Training rows first (then their crops), validation rows last: never cropped.
  std::vector<std::string> texts;
  std::vector<std::int64_t> labels;
  std::vector<std::string> val_texts;
  std::vector<std::int64_t> val_labels;
  std::vector<bool> in_scope;  // per row of texts, then of val_texts: not labelled `oos`
  std::vector<bool> val_in_scope;
  for (const auto& e : examples) {
    const auto c = categories.index_of(e.category);
    if (!c) throw ClassifyError("training example has unknown category '" + e.category + "'");
    const bool validation = salted_hash(e.id) % 100 < options.validation_percent;
    (validation ? val_texts : texts).push_back(e.text);
    (validation ? val_labels : labels).push_back(static_cast<std::int64_t>(*c));
    (validation ? val_in_scope : in_scope).push_back(!e.out_of_scope());
  }
  if (texts.empty()) throw ClassifyError("no training rows left after the validation split");
  const std::size_t original_rows = texts.size();
  if (options.augment_crops) {
    std::mt19937_64 rng(options.seed);
    for (std::size_t i = 0; i < original_rows; ++i)
      for (auto& crop : detail::text_crops(texts[i], rng)) {
        texts.push_back(std::move(crop));
        labels.push_back(labels[i]);
      }
  }
  if (val_texts.empty()) {  // tiny sets: calibrate on the training rows
    val_texts.assign(texts.begin(), texts.begin() + static_cast<std::ptrdiff_t>(original_rows));
    val_labels.assign(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(original_rows));
    val_in_scope.assign(in_scope.size(), false);  // rows that are prototypes calibrate nothing
  }
  std::vector<std::string> all(texts);
  all.insert(all.end(), val_texts.begin(), val_texts.end());
  const auto vectors = cached_embeddings(*encoder, all, progress);
  const auto n = static_cast<std::int64_t>(all.size());
  const auto rows = static_cast<std::int64_t>(texts.size());
  const auto d = static_cast<std::int64_t>(encoder->dimension());
  const auto classes = static_cast<std::int64_t>(categories.size());

  at::set_num_threads(1);  // small matrices: extra threads only spin
  const auto x_all =
      torch::from_blob(const_cast<float*>(vectors.data()), {n, d}, torch::kFloat32).clone();
  const auto xt = x_all.slice(0, 0, rows);
  const auto xv = x_all.slice(0, rows, n);
  const auto yt = torch::tensor(labels, torch::kInt64);
  const auto yv = torch::tensor(val_labels, torch::kInt64);

  auto gen = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  std::vector<std::int64_t> widths{d};
  if (options.hidden > 0) widths.push_back(static_cast<std::int64_t>(options.hidden));
  widths.push_back(classes);
  auto forward = [](const std::vector<torch::Tensor>& params, const torch::Tensor& x) {
    auto h = x;
    for (std::size_t l = 0; l < params.size(); l += 2) {
      h = torch::matmul(h, params[l].t()) + params[l + 1];
      if (l + 2 < params.size()) h = torch::relu(h);
    }
    return h;
  };
  // Members differ by initialisation and batch order (one generator, drawn in turn).
  std::vector<std::vector<torch::Tensor>> members(std::max<std::size_t>(options.ensemble, 1));
  EpochCounter counter{
      options, 0,
      members.size() * options.epochs + (options.lexical_mix > 0.0 ? options.lexical_epochs : 0)};
  for (auto& params : members) {
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
      auto w = torch::empty({widths[l + 1], widths[l]})
                   .normal_(0.0, 1.0 / std::sqrt(static_cast<double>(widths[l])), gen);
      params.push_back(w.requires_grad_());
      params.push_back(torch::zeros({widths[l + 1]}).requires_grad_());
    }
    fit(params, rows, options.epochs, options.learning_rate, options.weight_decay, gen, counter,
        [&](const torch::Tensor& idx) {
          return at::cross_entropy_loss(forward(params, xt.index_select(0, idx)),
                                        yt.index_select(0, idx), {}, at::Reduction::Mean, -100,
                                        options.label_smoothing);
        });
  }
  // The members' mean logits as one network: hidden layers side by side, output weights / N.
  std::vector<torch::Tensor> merged;
  {
    torch::NoGradGuard no_grad;
    const auto n_members = static_cast<double>(members.size());
    for (std::size_t i = 0; i < members.front().size(); i += 2) {
      std::vector<torch::Tensor> ws, bs;
      for (const auto& m : members) {
        ws.push_back(m[i].detach());
        bs.push_back(m[i + 1].detach());
      }
      const bool first = i == 0;
      const bool last = i + 2 == members.front().size();
      if (first && last) {  // linear heads: average
        merged.push_back(torch::stack(ws).mean(0));
        merged.push_back(torch::stack(bs).mean(0));
      } else if (first) {
        merged.push_back(torch::cat(ws, 0));
        merged.push_back(torch::cat(bs, 0));
      } else {
        merged.push_back(torch::cat(ws, 1) / n_members);
        merged.push_back(torch::stack(bs).mean(0));
      }
    }
  }

  detail::HeadModel head;
  for (const auto& c : categories) head.categories.push_back(c.name);
  head.encoder_id = encoder->model_id();
  for (std::size_t l = 0; l < merged.size(); l += 2) {
    detail::DenseLayer layer;
    layer.out = static_cast<std::size_t>(merged[l].size(0));
    layer.in = static_cast<std::size_t>(merged[l].size(1));
    layer.weight = tensor_values(merged[l]);
    layer.bias = tensor_values(merged[l + 1]);
    head.layers.push_back(std::move(layer));
  }
  HeadTrainingReport report;
  report.train_rows = original_rows;
  report.augmented_rows = texts.size() - original_rows;
  report.validation_rows = val_texts.size();
  torch::Tensor probs;
  {
    torch::NoGradGuard no_grad;
    const auto logits = forward(merged, xv);
    report.temperature = head.temperature = calibrate(logits, yv);
    probs = torch::softmax(logits / report.temperature, 1);
  }

  if (options.lexical_mix > 0.0) {
    std::vector<std::vector<std::int32_t>> tokens;
    for (const auto& t : all) tokens.push_back(encoder->token_ids(t));
    const auto vocabulary = static_cast<std::int64_t>(encoder->piece_count());
    const std::vector<std::vector<std::int32_t>> originals(
        tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(original_rows));
    head.lexical.idf = inverse_document_frequency(originals, static_cast<std::size_t>(vocabulary));
    std::vector<std::vector<std::pair<std::size_t, double>>> bags;
    for (const auto& t : tokens) bags.push_back(detail::tf_idf(t, head.lexical.idf));
    auto lw = torch::zeros({classes, vocabulary}).requires_grad_();
    auto lb = torch::zeros({classes}).requires_grad_();
    fit({lw, lb}, rows, options.lexical_epochs, options.lexical_learning_rate, 0.0, gen, counter,
        [&](const torch::Tensor& idx) {
          return torch::cross_entropy_loss(
              torch::matmul(dense_bags(bags, idx, vocabulary), lw.t()) + lb,
              yt.index_select(0, idx));
        });
    torch::NoGradGuard no_grad;
    const auto val_idx = torch::arange(rows, n, torch::kInt64);
    const auto logits = torch::matmul(dense_bags(bags, val_idx, vocabulary), lw.t()) + lb;
    head.lexical.temperature = report.lexical_temperature = calibrate(logits, yv);
    head.lexical.mix = options.lexical_mix;
    head.lexical.weight = tensor_values(lw);
    head.lexical.bias = tensor_values(lb);
    const auto mixed = torch::log(torch::clamp_min(
        (1.0 - options.lexical_mix) * probs +
            options.lexical_mix * torch::softmax(logits / head.lexical.temperature, 1),
        1e-30));
    head.lexical.mix_temperature = calibrate(mixed, yv);
    probs = torch::softmax(mixed / head.lexical.mix_temperature, 1);
  }
  // After the lexical part: the score's catch-all term reads the head's final distribution.
  head.scope =
      fit_scope(xt, in_scope, yt, xv, val_in_scope, probs.to(torch::kFloat32), categories, options);
  report.validation_accuracy = probs.argmax(1).eq(yv).to(torch::kFloat64).mean().item<double>();
  report.validation_ece = expected_calibration_error(probs, yv);
  report.seconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
          .count() /
      1000.0;
  detail::save_head(head, head_path,
                    {{"train_rows", report.train_rows},
                     {"augmented_rows", report.augmented_rows},
                     {"validation_rows", report.validation_rows},
                     {"validation_accuracy", report.validation_accuracy},
                     {"validation_ece", report.validation_ece},
                     {"epochs", options.epochs},
                     {"learning_rate", options.learning_rate},
                     {"weight_decay", options.weight_decay},
                     {"label_smoothing", options.label_smoothing},
                     {"ensemble", members.size()},
                     {"lexical_epochs", options.lexical_epochs},
                     {"lexical_learning_rate", options.lexical_learning_rate},
                     {"seed", options.seed},
                     {"scope", options.scope},
                     {"scope_rows", options.scope_rows},
                     {"scope_k", options.scope_k},
                     {"scope_density", options.scope_density},
                     {"scope_dimensions", options.scope_dimensions},
                     {"scope_catchall", options.scope_catchall},
                     {"scope_catchall_weight", options.scope_catchall_weight}});
  return report;
}

}  // namespace mcpclass::learned
