// Internal: a trained head as plain data, so inference needs no libtorch call.
//
//   p_dense = softmax(MLP(e) / T_dense)            e: the encoder's unit vector; ReLU between
//   layers x_v     = log(1 + count_v) · idf_v, x /= |x|   bag of the query's token ids (tf-idf)
//   p_lex   = softmax((W·x + b) / T_lex)
//   p       = softmax(log((1 − λ)·p_dense + λ·p_lex) / T_mix)
// λ = 0 (no lexical part): p = p_dense. Each T is calibrated on validation rows (T_mix last).
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::learned::detail {

struct DenseLayer {
  std::size_t in = 0;
  std::size_t out = 0;
  std::vector<float> weight;  ///< out × in, row-major.
  std::vector<float> bias;    ///< out.
};

/// x of the formula above as sorted (id, x_id) pairs; ids outside `idf` are ignored.
std::vector<std::pair<std::size_t, double>> tf_idf(std::span<const std::int32_t> ids,
                                                   std::span<const float> idf);

/// Linear model over the tf-idf bag of token ids; sparse at inference (cost ∝ query tokens).
struct LexicalLayer {
  std::vector<float> idf;     ///< Per token id (vocabulary size).
  std::vector<float> weight;  ///< classes × vocabulary, row-major.
  std::vector<float> bias;    ///< classes.
  double temperature = 1.0;
  double mix = 0.0;              ///< λ.
  double mix_temperature = 1.0;  ///< T_mix.

  bool empty() const { return idf.empty(); }
  /// softmax((W·x + b) / temperature) for the tf-idf vector x of `ids`.
  std::vector<double> probabilities(std::span<const std::int32_t> ids) const;
};

/// How far an embedding is from the rows the head was trained on (issue 34, out of scope):
///   s(e, p)  = mean cosine similarity of e to its k most similar prototypes
///              − density_weight × mean density of those prototypes
///              − catchall_weight × p[catchall]
///              + label_energy_weight × log Σ_l exp(z_l),  z = label_scale × W·e/|e| + b
///   in_scope = share of the held-out validation rows whose s is below s(e, p), interpolated
///              between the stored quantiles (0 = further out than every validation row, 1 =
///              closer in).
/// A prototype's density is its mean similarity to its k nearest other prototypes: subtracting it
/// judges e against how tight its neighbourhood is (broad sources such as StackExchange titles
/// are sparse). p is the head's own distribution; the catch-all term lowers text the head sends
/// to the category meant for "none of the others". Measured on the router sources (models/
/// README.md): each term added about 5 and 20 points of out-of-scope requests caught at ≤ 10%
/// of every in-domain source. Prototypes are training rows' unit embeddings (or, trained with
/// centroids, one unit mean per category, k = 1); the validation rows were never prototypes.
/// Similarities are taken after an optional linear projection (the prototypes' top principal
/// directions, `mcpclass train --scope-dimensions`, 128 by default): 8,192 prototypes of 512
/// values are 16 MiB read per text, and at 128 dimensions the rule lost under 2 points.
/// z are the logits of a linear softmax over the prototypes' own fine labels (CLINC150's 150
/// intents, Banking77's 77, StackExchange's sites, …; `--scope-label-weight`): its log-partition
/// is high for text like some label's rows and low for text like none, which the similarity to
/// the nearest rows alone misses for CLINC150's short requests (offline, + 8 points; models/
/// README.md).
/// Many prototypes (every train row of a domain, `--scope-data`) are grouped in an inverted-file
/// index: each row in the list of its most similar centroid, a text compared with the rows of its
/// `probes` most similar lists only; calibration goes through the same search, so in_scope
/// stays the share of validation rows below. Empty for heads trained before.
struct ScopeModel {
  std::size_t input = 0;          ///< Width of the embeddings scored.
  std::size_t dimension = 0;      ///< Width of the prototypes (the projection's outputs).
  std::vector<float> projection;  ///< dimension × input, or empty (dimension == input).
  std::size_t k = 1;
  std::vector<float> prototypes;  ///< rows × dimension, unit rows.
  std::vector<float> density;     ///< One per prototype row, or empty (no density term).
  std::vector<float> quantiles;   ///< Ascending s of the validation rows at 0, 1/(q-1), …, 1.
  std::string method;             ///< "rows" or "centroids", for reports.
  double density_weight = 0.0;
  std::optional<std::size_t> catchall;  ///< Index into the head's categories.
  double catchall_weight = 0.0;
  /// Inverted-file index: lists × dimension unit centroids, list i holding prototype rows
  /// [offsets[i], offsets[i + 1]). Empty = every prototype is compared.
  std::vector<float> centroids;
  std::vector<std::size_t> offsets;
  std::size_t probes = 1;  ///< Lists searched per text.
  /// The fine-label term: labels × input weights and labels biases, or empty (no such term).
  std::vector<float> label_weights;
  std::vector<float> label_bias;
  double label_scale = 1.0;
  double label_energy_weight = 0.0;

  bool empty() const { return prototypes.empty(); }
  std::size_t rows() const { return dimension ? prototypes.size() / dimension : 0; }
  /// s(e, p) above; `e` must have `input` values, `p` the head's categories' (or be empty
  /// when there is no catch-all term).
  double score(std::span<const float> e, std::span<const double> p) const;
  /// in_scope above, in [0, 1], of a score().
  double in_scope(double score) const;
  /// log Σ_l exp(z_l) of the fine-label term above; `e` has `input` values.
  double label_energy(std::span<const float> e) const;
};

struct HeadModel {
  std::vector<DenseLayer> layers;
  ScopeModel scope;                     ///< Empty for heads without an out-of-scope score.
  LexicalLayer lexical;                 ///< Empty for heads without a lexical part.
  std::vector<std::string> categories;  ///< Logit order.
  double temperature = 1.0;             ///< T_dense.
  std::string encoder_id;               ///< SentenceEncoder::model_id() it was trained on.

  /// p of the formula above over `categories`; `temperature_override` > 0 replaces T_dense.
  std::vector<double> probabilities(std::span<const float> x, std::span<const std::int32_t> ids,
                                    double temperature_override) const;
};

/// Reads the head `path` and its manifest `path + ".json"`. A safetensors file is read here; any
/// other is taken for a TorchScript module and read by the libtorch plugin. Throws ClassifyError,
/// also for a head whose checksum is not the one its manifest recorded (the pair of files of two
/// trainings, or of one cut short between its two writes).
HeadModel load_head(const std::string& path);

/// Writes `head` as `path` and its manifest `path + ".json"` (with the head file's checksum) with
/// `report` added, both atomically. The parameters are w0, b0, … ([out, in], [out]) and, with a
/// lexical part, lex_w, lex_b, lex_idf: as a safetensors file when `path` ends with `.safetensors`,
/// else as a TorchScript module (forward(e) = dense logits) written by the libtorch plugin. Throws
/// ClassifyError.
void save_head(const HeadModel& head, const std::string& path, const boost::json::object& report);

}  // namespace mcpclass::learned::detail
