// A TokenClassifier that runs elsewhere: the token-classification tool of another MCP server
// (`detect_pii` of an mcpclass `serve` with a token_classifier section, or any tool answering
// the transformers pipeline's span shape {entity_group, score, word, start, end}), over the
// remote classifier's transports, retries and circuit breaker. It makes a remote model a PII
// source of the routing signals and of `serve`'s own span tool.
//
// Thread-safety: detect() may be called concurrently; calls share one connection.
#pragma once

#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/remote/remote_classifier.hpp"

#include <memory>

namespace mcpclass::remote {

class RemoteTokenClassifier : public learned::TokenClassifier {
 public:
  /// `options.tool` names the tool (empty: detect_pii); the category settings are unused.
  /// Connects and checks that the tool exists. Throws RemoteError or ConfigError.
  explicit RemoteTokenClassifier(RemoteClassifierOptions options);
  /// Same, over a given transport.
  RemoteTokenClassifier(RemoteClassifierOptions options,
                        std::shared_ptr<client::ClientTransport> transport);
  ~RemoteTokenClassifier() override;

  /// Sends the text (and `aggregation` when given). Every span is checked against the text:
  /// offsets in range and on character boundaries, a label, a score in [0, 1]; byte offsets are
  /// derived from code points when the server gives none. Throws a RemoteError subclass.
  std::vector<learned::TokenSpan> detect(
      std::string_view text, std::optional<learned::TokenAggregation> aggregation) const override;
  /// simple, the pipeline's default (a call without `aggregation` gets the server's own).
  learned::TokenAggregation aggregation() const override;
  /// Empty: the server does not list its labels.
  const std::vector<std::string>& labels() const override;
  /// {kind: remote, tool, endpoint, calls, failures, retries, circuit[, last_error]}.
  json::object info() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::remote
