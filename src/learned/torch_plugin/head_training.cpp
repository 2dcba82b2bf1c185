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
constexpr std::size_t kScopeLabelEpochs = 30;  // fit_label_term

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

torch::Tensor unit_rows(const torch::Tensor& x) {
  return x / x.norm(2, 1, true).clamp_min(1e-12);
}

// For each unit row of `x`, the index of its most similar row of `centroids`.
torch::Tensor nearest_centroid(const torch::Tensor& x, const torch::Tensor& centroids) {
  return torch::matmul(x, centroids.t()).argmax(1);
}

// Groups the unit `prototypes` into `lists` inverted-file lists by spherical k-means (Lloyd's
// iterations from an even stride of rows); returns the order that puts them list by list and
// fills scope.centroids and scope.offsets.
torch::Tensor index_prototypes(const torch::Tensor& prototypes, std::int64_t lists,
                               detail::ScopeModel& scope) {
  constexpr int kIterations = 10;
  const auto n = prototypes.size(0);
  auto centroids = prototypes.index_select(
      0, torch::linspace(0, static_cast<double>(n - 1), lists).round().to(torch::kInt64));
  torch::Tensor assigned;
  for (int i = 0; i < kIterations; ++i) {
    assigned = nearest_centroid(prototypes, centroids);
    const auto sums = torch::zeros_like(centroids).index_add_(0, assigned, prototypes);
    const auto empty = torch::bincount(assigned, {}, lists).eq(0).unsqueeze(1);
    centroids = unit_rows(torch::where(empty, centroids, sums));  // an empty list keeps its own
  }
  assigned = nearest_centroid(prototypes, centroids);
  const auto order = std::get<1>(assigned.sort(/*stable=*/true, 0, false));
  const auto sizes = torch::bincount(assigned, {}, lists);
  scope.centroids = tensor_values(centroids.contiguous());
  scope.offsets.assign(1, 0);
  for (std::int64_t l = 0; l < lists; ++l)
    scope.offsets.push_back(scope.offsets.back() + sizes[l].item<std::int64_t>());
  return order;
}

// Share of the k nearest prototypes of each unit row of `queries` that the inverted-file search
// (scope.probes lists) finds too: what the index costs the score, for the training report.
double index_recall(const torch::Tensor& queries, const torch::Tensor& prototypes,
                    const detail::ScopeModel& scope) {
  constexpr std::int64_t kBlock = 256;
  const auto k = static_cast<std::int64_t>(std::min<std::size_t>(scope.k, scope.rows()));
  const auto lists = static_cast<std::int64_t>(scope.offsets.size() - 1);
  const auto probes = std::min<std::int64_t>(static_cast<std::int64_t>(scope.probes), lists);
  const auto centroids = torch::from_blob(const_cast<float*>(scope.centroids.data()),
                                          {lists, prototypes.size(1)}, torch::kFloat32);
  std::vector<std::int64_t> list_of_row;
  for (std::int64_t l = 0; l < lists; ++l)
    list_of_row.insert(list_of_row.end(), scope.offsets[l + 1] - scope.offsets[l], l);
  const auto row_list = torch::tensor(list_of_row);
  double found = 0.0;
  for (std::int64_t i = 0; i < queries.size(0); i += kBlock) {
    const auto q = queries.slice(0, i, std::min(i + kBlock, queries.size(0)));
    const auto sims = torch::matmul(q, prototypes.t());
    const auto exact = std::get<1>(sims.topk(k, 1));
    const auto probed = std::get<1>(torch::matmul(q, centroids.t()).topk(probes, 1));
    const auto allowed = torch::zeros({q.size(0), lists}, torch::kBool)
                             .scatter_(1, probed, true)
                             .index_select(1, row_list);
    const auto searched =
        std::get<1>(sims.masked_fill(allowed.logical_not(), -INFINITY).topk(k, 1));
    found += exact.unsqueeze(2).eq(searched.unsqueeze(1)).any(2).sum().item<double>();
  }
  return found / static_cast<double>(queries.size(0) * k);
}

// Candidate prototype rows: unit-normalised later; their categories and fine-label indices.
struct ScopeRows {
  torch::Tensor x;
  torch::Tensor categories;
  torch::Tensor fine;
  std::int64_t fine_labels = 0;
};

// The fine-label term (head_model.hpp): a linear softmax over the candidates' fine labels on
// kLabelScale × their unit embeddings; its weight is `weight` over the spread of the validation
// rows' log-partitions (`queries`), so the option does not depend on the label count. Offline
// (models/README.md), 30 epochs at scale 8 caught the most out-of-scope requests.
void fit_label_term(const torch::Tensor& unit, const ScopeRows& rows, const torch::Tensor& queries,
                    double weight, at::Generator& gen, EpochCounter& counter,
                    detail::ScopeModel& scope) {
  constexpr double kLabelScale = 8.0;
  constexpr double kLearningRate = 3e-3;
  auto w = torch::zeros({rows.fine_labels, unit.size(1)}).requires_grad_();
  auto b = torch::zeros({rows.fine_labels}).requires_grad_();
  const auto x = unit * kLabelScale;
  fit({w, b}, unit.size(0), kScopeLabelEpochs, kLearningRate, 0.0, gen, counter,
      [&](const torch::Tensor& idx) {
        return torch::cross_entropy_loss(torch::matmul(x.index_select(0, idx), w.t()) + b,
                                         rows.fine.index_select(0, idx));
      });
  torch::NoGradGuard no_grad;
  const auto energies =
      torch::logsumexp(torch::matmul(unit_rows(queries) * kLabelScale, w.t()) + b, 1);
  scope.label_weights = tensor_values(w);
  scope.label_bias = tensor_values(b);
  scope.label_scale = kLabelScale;
  scope.label_energy_weight = weight / std::max(energies.std().item<double>(), 1e-12);
}

// The head's out-of-scope score (head_model.hpp ScopeModel): prototypes from the unit rows of
// `candidates` (labelled `labels`), quantiles of the scores of the validation rows `val` of `xv`,
// whose head distribution is `val_probs`. Adds the prototypes and the index to `report`.
detail::ScopeModel fit_scope(const ScopeRows& candidates, const torch::Tensor& xv,
                             const std::vector<std::int64_t>& val, const torch::Tensor& val_probs,
                             const CategorySet& categories, const HeadTrainingOptions& options,
                             at::Generator& gen, EpochCounter& counter, json::object& report) {
  constexpr std::int64_t kQuantiles = 101;
  constexpr std::int64_t kUnindexedRows = 8192;
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
  if (candidates.x.size(0) == 0 || val.size() < 2) return scope;
  const auto val_index = torch::tensor(val);
  const auto queries = xv.index_select(0, val_index).contiguous();
  scope.input = static_cast<std::size_t>(xv.size(1));
  const auto train = unit_rows(candidates.x);
  if (options.scope == "rows" && options.scope_label_weight != 0.0)
    fit_label_term(train, candidates, queries, options.scope_label_weight, gen, counter, scope);
  torch::NoGradGuard no_grad;
  torch::Tensor prototypes;
  torch::Tensor projection;  // undefined: similarities in the encoder's own dimensions
  torch::Tensor density;
  if (options.scope == "centroids") {
    std::vector<torch::Tensor> means;
    for (std::int64_t c = 0; c < static_cast<std::int64_t>(categories.size()); ++c) {
      const auto mask = candidates.categories.eq(c);
      if (mask.any().item<bool>()) means.push_back(train.index({mask}).mean(0));
    }
    prototypes = unit_rows(torch::stack(means));
    scope.k = 1;
  } else {
    // An even stride over the rows (in file order, so every source keeps its share).
    const auto n = train.size(0);
    const auto cap = options.scope_rows ? static_cast<std::int64_t>(options.scope_rows) : n;
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
      projection = vectors.slice(1, vectors.size(1) - width).flip(1).t().to(torch::kFloat32);
      prototypes = unit_rows(torch::matmul(prototypes, projection.t()));
      scope.projection = tensor_values(projection.contiguous());
    }
    if (options.scope_density != 0.0) {
      density = prototype_density(prototypes, static_cast<std::int64_t>(scope.k));
      scope.density_weight = options.scope_density;
    }
    const auto rows = prototypes.size(0);
    const auto lists =
        options.scope_lists
            ? std::min<std::int64_t>(static_cast<std::int64_t>(options.scope_lists), rows)
            : (rows > kUnindexedRows
                   ? static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(rows))))
                   : 1);
    if (lists > 1) {
      const auto order = index_prototypes(prototypes, lists, scope);
      prototypes = prototypes.index_select(0, order);
      if (density.defined()) density = density.index_select(0, order);
      scope.probes = std::max<std::size_t>(options.scope_probes, 1);
    }
  }
  if (density.defined()) scope.density = tensor_values(density);
  scope.method = options.scope;
  scope.dimension = static_cast<std::size_t>(prototypes.size(1));
  scope.prototypes = tensor_values(prototypes.contiguous());
  // The validation rows scored by the code that scores texts when serving, so the quantiles
  // and the scores they calibrate are the same function.
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
  report["scope_prototypes"] = scope.rows();
  if (!scope.centroids.empty()) {
    const auto projected = projection.defined() ? torch::matmul(queries, projection.t()) : queries;
    report["scope_lists"] = scope.offsets.size() - 1;
    report["scope_probes"] = scope.probes;
    report["scope_index_recall"] = index_recall(unit_rows(projected), prototypes, scope);
  }
  return scope;
}

bool in_validation(const LabelledExample& e, const HeadTrainingOptions& options) {
  return salted_hash(e.id) % 100 < options.validation_percent;
}

// A row's fine label for the out-of-scope score's label term: its own label (a CLINC150 intent,
// a StackExchange site), else its category, within its source.
std::string fine_label(const LabelledExample& e) {
  return e.source + '\x1f' + (e.label.empty() ? e.category : e.label);
}

// The rows the out-of-scope prototypes are drawn from: the training rows `xt` that are `usable`
// (not labelled `oos`; crops never; `fine` their fine labels), or options.scope_examples outside
// the validation part and not labelled `oos` (a validation row must not find itself).
ScopeRows scope_candidates(const SentenceEncoder& encoder, const torch::Tensor& xt,
                           const torch::Tensor& yt, const std::vector<bool>& usable,
                           const std::vector<std::string>& fine, const CategorySet& categories,
                           const HeadTrainingOptions& options, const LearnedProgress& progress) {
  ScopeRows out;
  std::map<std::string, std::int64_t> label_ids;
  std::vector<std::int64_t> labels;
  const auto add_label = [&](const std::string& name) {
    labels.push_back(label_ids.emplace(name, label_ids.size()).first->second);
  };
  if (options.scope_examples.empty()) {
    std::vector<std::int64_t> rows;
    for (std::size_t i = 0; i < usable.size(); ++i)
      if (usable[i]) {
        rows.push_back(static_cast<std::int64_t>(i));
        add_label(fine[i]);
      }
    const auto index = torch::tensor(rows, torch::kInt64);
    out.x = xt.index_select(0, index);
    out.categories = yt.index_select(0, index);
  } else {
    std::vector<std::string> texts;
    std::vector<std::int64_t> category;
    for (const auto& e : options.scope_examples) {
      const auto c = categories.index_of(e.category);
      if (!c) throw ClassifyError("scope row has unknown category '" + e.category + "'");
      if (e.out_of_scope() || in_validation(e, options)) continue;
      texts.push_back(e.text);
      category.push_back(static_cast<std::int64_t>(*c));
      add_label(fine_label(e));
    }
    if (texts.empty())
      throw ClassifyError("no scope rows left outside the validation part and `oos` rows");
    const auto vectors = cached_embeddings(encoder, texts, progress);
    const auto n = static_cast<std::int64_t>(texts.size());
    const auto d = static_cast<std::int64_t>(encoder.dimension());
    out.x = torch::from_blob(const_cast<float*>(vectors.data()), {n, d}, torch::kFloat32).clone();
    out.categories = torch::tensor(category, torch::kInt64);
  }
  out.fine = torch::tensor(labels, torch::kInt64);
  out.fine_labels = static_cast<std::int64_t>(label_ids.size());
  return out;
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
  std::vector<std::string> fine;  // per row of texts (not crops): fine_label
  for (const auto& e : examples) {
    const auto c = categories.index_of(e.category);
    if (!c) throw ClassifyError("training example has unknown category '" + e.category + "'");
    const bool validation = in_validation(e, options);
    (validation ? val_texts : texts).push_back(e.text);
    (validation ? val_labels : labels).push_back(static_cast<std::int64_t>(*c));
    (validation ? val_in_scope : in_scope).push_back(!e.out_of_scope());
    if (!validation) fine.push_back(fine_label(e));
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
      members.size() * options.epochs + (options.lexical_mix > 0.0 ? options.lexical_epochs : 0) +
          (options.scope == "rows" && options.scope_label_weight != 0.0 ? kScopeLabelEpochs : 0)};
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
  std::vector<std::int64_t> val_rows;
  for (std::size_t i = 0; i < val_in_scope.size(); ++i)
    if (val_in_scope[i]) val_rows.push_back(static_cast<std::int64_t>(i));
  json::object scope_report;
  head.scope = fit_scope(
      scope_candidates(*encoder, xt, yt, in_scope, fine, categories, options, progress), xv,
      val_rows, probs.to(torch::kFloat32), categories, options, gen, counter, scope_report);
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
                     {"scope_catchall_weight", options.scope_catchall_weight},
                     {"scope_label_weight", options.scope_label_weight},
                     {"scope_data_rows", options.scope_examples.size()},
                     {"scope_fit", scope_report}});
  return report;
}

}  // namespace mcpclass::learned
