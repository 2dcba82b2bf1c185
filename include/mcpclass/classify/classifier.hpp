// The interface every classifier implements (rules today; embeddings or models later).
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/util/span_record.hpp"
#include "mcpclass/util/trace_context.hpp"

#include <boost/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

struct ClassifyOptions {
  /// The caller will return the distribution. A hint only: implementations may always compute
  /// it, and Classification::probabilities is always the real distribution.
  bool with_probabilities = false;
  /// The span this classification runs under, or null. A classifier that calls another service
  /// (a remote) sends its trace on: the same trace id with a span of its own as parent
  /// (docs/tracing.md). Outlives the call.
  const util::SpanContext* trace = nullptr;
  /// Where such a call records its CLIENT span (null: not recorded). Outlives the call.
  util::SpanSink* spans = nullptr;
};

/// A sentence pair: NLI's premise and hypothesis, a fact check's claim and evidence, a
/// cross-encoder's query and passage. Both views must outlive the call.
struct TextPair {
  std::string_view text;
  std::string_view text_pair;
};

/// A passage's relevance to a query, as a cross-encoder reranker scores it.
struct RerankScore {
  /// The logit through the checkpoint's activation (sentence-transformers' CrossEncoder's:
  /// sigmoid unless its config names another), so higher is more relevant.
  double score = 0.0;
  double logit =
      0.0;  ///< The model's one output as it is (text-embeddings-inference's raw_scores).
};

/// Chooses one of categories() for a text.
///
/// Thread-safety: every const member may be called concurrently from any thread. classify() may
/// be slow (model inference), so callers run it off I/O threads. It is deterministic: the same
/// text and options give the same result, and the result satisfies check_classification().
class Classifier {
 public:
  virtual ~Classifier() = default;

  virtual const CategorySet& categories() const = 0;
  /// Throws ClassifyError on internal failure; any text (including empty) is valid input.
  virtual Classification classify(std::string_view text, const ClassifyOptions& options) const = 0;
  Classification classify(std::string_view text) const { return classify(text, ClassifyOptions{}); }
  /// Result i for texts[i]. The default classifies one by one; a classifier with a batched
  /// forward pass (trained_head) overrides it. Throws like classify().
  virtual std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                                     const ClassifyOptions& options) const {
    std::vector<Classification> out;
    out.reserve(texts.size());
    for (const auto text : texts) out.push_back(classify(text, options));
    return out;
  }
  /// Whether classify_pairs() takes sentence pairs: a pair model's classifier (kind transformer
  /// over a checkpoint, whose tokenizer.json has the pair template). False for the others.
  virtual bool takes_pairs() const { return false; }
  /// Result i for pairs[i], both texts encoded together as the model was trained on them (the
  /// tokenizer's pair template and token types). The default throws ClassifyError naming kind():
  /// this classifier classifies one text.
  virtual std::vector<Classification> classify_pairs(std::span<const TextPair> pairs,
                                                     const ClassifyOptions& options) const;
  /// Whether rerank() scores passages: a cross-encoder reranker (kind transformer over a 1-label
  /// sequence classifier, e.g. BAAI/bge-reranker-base). A reranker has one output, no
  /// distribution: its classify() and classify_pairs() throw ClassifyError saying so.
  virtual bool reranks() const { return false; }
  /// Score i for passages[i] against `query`, each pair encoded as classify_pairs() encodes it
  /// (query first). The default throws ClassifyError naming kind(): this classifier does not
  /// rerank.
  virtual std::vector<RerankScore> rerank(std::string_view query,
                                          std::span<const std::string_view> passages,
                                          const ClassifyOptions& options) const;
  /// The other tasks of a base shared by several adapters (kind transformer with `adapters`):
  /// each a classifier of its own over the same loaded base, by task name, in the configured
  /// order, this classifier's own task excluded. Empty for every other classifier.
  virtual std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> tasks() const {
    return {};
  }
  /// Short identifier of the implementation, e.g. "rules".
  virtual std::string kind() const = 0;
  /// Whether a result may be reused for the same text and options (server.cache). False when
  /// answers depend on something outside this process, such as a remote peer and its reloads.
  virtual bool cacheable() const { return true; }
  /// Operator facts for /health: at least "kind", "model" and "index_size".
  virtual json::object info() const = 0;
  /// Checksum of what the answers come from (provenance.hpp), read once per load: a classifier
  /// that knows its weights or rules overrides it. The default is fnv1a64_id() of info(), which
  /// names the model files and their settings but not their bytes.
  virtual std::string model_id() const;
  /// Checksum of the tokenizer's files; empty when the classifier has no tokenizer of its own.
  virtual std::string tokenizer_id() const { return {}; }
};

/// The tasks `classifier` answers for a base shared by several adapters: its own task first (its
/// info()'s "task", what classify() answers), then tasks()' in order. Empty for a classifier of
/// no named task.
std::vector<std::string> task_names(const Classifier& classifier);

/// The classifier answering `task`: `classifier` itself for its own task, the one of its tasks()
/// of that name, else null.
std::shared_ptr<const Classifier> find_task(const std::shared_ptr<const Classifier>& classifier,
                                            std::string_view task);

}  // namespace mcpclass::classify
