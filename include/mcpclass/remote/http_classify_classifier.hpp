// A Classifier behind the Semantic Router's `http_classify` contract (docs/http-classify.md):
// `POST <url>/classify` with `{"inputs": text}`, `Content-Type` and `Accept: application/json`,
// `Authorization: Bearer <access_key>` when a key is set, answered by `[{label, score}]`, the full
// distribution (a Hugging Face pipeline, text-embeddings-inference's /predict, another `mcpclass
// serve`). The answer is checked as that router checks it (http_classify_answer.hpp) and mapped
// onto the configured categories by label; the routing policy then picks model and reasoning as
// for any local classifier. Transport failures and 5xx answers are retried with backoff behind
// the circuit breaker MCP remotes use; results below `confidence_threshold` become
// `fallback_category`, and `kind: composite` puts rules behind it as for MCP remotes.
//
// Thread-safety: like every Classifier, const members may be called concurrently.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/remote/remote_classifier.hpp"

#include <memory>

namespace mcpclass::remote {

class HttpClassifyClassifier : public classify::Classifier {
 public:
  /// `options` with protocol http_classify; `categories` the configuration's (the fallback
  /// category appended when absent, as for MCP remotes), `policy` its routing. Makes no request
  /// (the contract has no handshake). Throws ConfigError (a bad URL, an unset `${NAME}`).
  HttpClassifyClassifier(RemoteClassifierOptions options, const classify::CategorySet& categories,
                         classify::RoutingPolicy policy);
  ~HttpClassifyClassifier() override;

  const classify::CategorySet& categories() const override;
  /// Throws a RemoteError subclass; never returns an unchecked answer.
  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions& options) const override;
  using classify::Classifier::classify;
  /// The contract's pair input, `{"inputs": {"text", "text_pair"}}` (the Hugging Face
  /// pipeline's), one POST per pair: whether the peer's model takes pairs is the peer's to say
  /// (a 4xx refusal is thrown as RemoteProtocolError with its body).
  bool takes_pairs() const override { return true; }
  std::vector<classify::Classification> classify_pairs(
      std::span<const classify::TextPair> pairs,
      const classify::ClassifyOptions& options) const override;
  std::string kind() const override { return "remote"; }
  bool cacheable() const override { return false; }
  /// {kind, model, index_size, protocol, endpoint, calls, failures, retries, circuit[,
  /// last_error]}.
  json::object info() const override;

 private:
  // The answer to one POST of `inputs` (`text` is the first text, for the routing policy).
  classify::Classification answer(std::string_view text, boost::json::value inputs,
                                  const classify::ClassifyOptions& options) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::remote
