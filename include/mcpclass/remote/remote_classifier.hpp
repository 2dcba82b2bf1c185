// A Classifier that runs elsewhere: any MCP server with a classification tool (another mcpclass,
// the Semantic Router's example servers), reached over stdio, Streamable HTTP, legacy SSE or the
// `POST <url>/<method>` dialect. Tool auto-discovery, category fetching and result validation
// follow reference.md §3; transport failures are retried with exponential backoff and jitter
// behind a circuit breaker; results below `confidence_threshold` become `fallback_category`.
//
// Thread-safety: like every Classifier, const members may be called concurrently; requests share
// one connection and a reconnect is done by one caller while the others wait for it.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/client/transport.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::auth {
struct OAuthOptions;  // mcpclass/auth/oauth.hpp
}

namespace mcpclass::remote {

namespace json = boost::json;

/// Why a remote classification failed; the exception types below carry one each.
enum class RemoteFailure {
  unreachable,
  timeout,
  protocol,
  invalid_result,
  circuit_open,
  untrusted
};
std::string_view to_string(RemoteFailure failure);

class RemoteError : public classify::ClassifyError {
 public:
  RemoteError(RemoteFailure failure, const std::string& message)
      : classify::ClassifyError(message), failure_(failure) {}
  RemoteFailure failure() const noexcept { return failure_; }
  /// Transport failures and timeouts: the server may be fine on the next attempt.
  bool transient() const noexcept {
    return failure_ == RemoteFailure::unreachable || failure_ == RemoteFailure::timeout;
  }

 private:
  RemoteFailure failure_;
};

/// Cannot connect, the process exited, the connection broke.
class RemoteUnreachable : public RemoteError {
 public:
  explicit RemoteUnreachable(const std::string& m) : RemoteError(RemoteFailure::unreachable, m) {}
};
/// No answer within `timeout`.
class RemoteTimeout : public RemoteError {
 public:
  explicit RemoteTimeout(const std::string& m) : RemoteError(RemoteFailure::timeout, m) {}
};
/// JSON-RPC errors, isError results, no classification tool, unsupported protocol version.
class RemoteProtocolError : public RemoteError {
 public:
  explicit RemoteProtocolError(const std::string& m) : RemoteError(RemoteFailure::protocol, m) {}
};
/// The result is malformed or fails validation (index range, probabilities, confidence).
class RemoteInvalidResult : public RemoteError {
 public:
  explicit RemoteInvalidResult(const std::string& m)
      : RemoteError(RemoteFailure::invalid_result, m) {}
};
/// The server's TLS certificate was refused (client::CertificateError): not retried, since only
/// a change of certificate or `ca_file` fixes it.
class RemoteUntrusted : public RemoteError {
 public:
  explicit RemoteUntrusted(const std::string& m) : RemoteError(RemoteFailure::untrusted, m) {}
};
/// The circuit breaker is open: recent calls failed, this one was not attempted.
class RemoteCircuitOpen : public RemoteError {
 public:
  explicit RemoteCircuitOpen(const std::string& m) : RemoteError(RemoteFailure::circuit_open, m) {}
};

/// `classifier.remote.auth`: OAuth 2.1 for the Streamable HTTP and REST transports (see
/// mcpclass/auth/oauth.hpp). A router has no user to approve, so the default grant is
/// client_credentials; authorization_code uses the headless helper (for authorization servers
/// that approve without a user).
struct RemoteAuthOptions {
  std::string grant = "client_credentials";  ///< client_credentials | authorization_code
  std::string client_id;                     ///< empty: dynamic registration (or CIMD)
  std::string client_secret;                 ///< `${ENV}` expanded when the transport is made
  std::string private_key_file;              ///< PEM for private_key_jwt, read then
  std::string signing_algorithm = "ES256";   ///< ES256 | RS256
  std::string token_endpoint_auth_method;    ///< empty: chosen from the server's metadata
  std::string scope;
  std::string client_metadata_url;
  std::string redirect_uri;  ///< empty: OAuthOptions' default
  int max_attempts = 3;
  bool require_https = true;  ///< false: plain http:// authorization servers off loopback too
  /// Issuers this client may use (OAuthOptions::allowed_authorization_servers).
  std::vector<std::string> allowed_authorization_servers;

  /// Reads the `auth` object. Throws ConfigError naming the key.
  static RemoteAuthOptions from_json(const json::value& v, const std::string& path);
  /// Secrets stay out: a literal client_secret shows as "***" (a `${ENV}` reference as is).
  json::object to_json() const;
  /// The transport's options: expands `${ENV}` and reads the key file. `timeout` bounds each
  /// request to the authorization server. Throws ConfigError (unreadable key file).
  auth::OAuthOptions to_oauth(std::chrono::milliseconds timeout) const;
};

struct RemoteClassifierOptions {
  /// auto (stdio when `command` is set, legacy SSE when the URL ends in /sse, else Streamable
  /// HTTP) | streamable-http | sse | rest | stdio.
  std::string transport = "auto";
  std::string url;
  std::vector<std::string> command;            ///< stdio: argv of the server
  std::map<std::string, std::string> env;      ///< stdio: extra environment
  std::map<std::string, std::string> headers;  ///< HTTP: values get `${ENV}` expansion
  /// https://: PEM CAs to verify the server against instead of the system trust store.
  std::string ca_file;
  /// OAuth for the streamable-http and rest transports.
  std::optional<RemoteAuthOptions> auth;

  /// The MCP revision to speak (client::choose_protocol); empty = the newest handshake revision.
  /// `http_classify` is not MCP but the Semantic Router's label-distribution contract
  /// (`POST <url>/classify`, mcpclass/remote/http_classify_classifier.hpp): the categories are
  /// the configuration's, and the MCP-only keys (transport, command, env, auth, tool,
  /// categories_tool, cache_categories, refresh_interval, num_categories) do not apply.
  std::string protocol;
  /// http_classify: sent as `Authorization: Bearer <key>`; "${NAME}" reads the environment when
  /// the classifier is made.
  std::string access_key;
  /// http_classify: the category each label of the server means, where the names differ
  /// (`{LABEL_0: math}`); other labels must be category names.
  std::map<std::string, std::string> labels;
  std::string tool;  ///< Configured tool name; empty = auto-discovery.
  std::string categories_tool = "list_categories";

  /// Per attempt, connect included. Always finite.
  std::chrono::milliseconds timeout{5'000};
  /// Further attempts after a transport failure or timeout (not after errors or bad results).
  int max_retries = 2;
  std::chrono::milliseconds retry_backoff{100};  ///< doubled per retry, ±50% jitter
  std::chrono::milliseconds max_backoff{2'000};

  bool cache_categories = true;
  std::chrono::milliseconds refresh_interval{300'000};
  /// When set, the server must offer exactly this many categories.
  std::optional<std::size_t> num_categories;

  double confidence_threshold = 0.5;
  /// Below the threshold the result becomes this category; appended to the server's categories
  /// (with probability 0) when the server has none of that name.
  std::string fallback_category = "other";

  /// Consecutive failed calls that open the breaker, and how long it stays open.
  int breaker_failures = 5;
  std::chrono::milliseconds breaker_open{30'000};

  /// Reads the `classifier.remote` section: transport, url, command (string or list), env,
  /// headers, ca_file, auth {...}, protocol, tool, categories_tool, timeout (s), max_retries,
  /// retry_backoff (s), cache_categories, refresh_interval (s), num_categories,
  /// confidence_threshold, fallback_category, circuit_breaker {failures, open_seconds}; with
  /// protocol http_classify also access_key and labels. Throws ConfigError naming the key.
  static RemoteClassifierOptions from_json(const json::value& v,
                                           const std::string& path = "classifier.remote");
  json::object to_json() const;
  bool http_classify() const { return protocol == kHttpClassifyProtocol; }

  static constexpr std::string_view kHttpClassifyProtocol = "http_classify";
};

/// The tool to call: `configured` when set (must exist), else the first of classify_text,
/// classify, categorize, categorize_text, else the first tool whose lower-cased name or
/// description contains "classif". Throws RemoteProtocolError listing the tools.
std::string discover_classification_tool(const json::array& tools, std::string_view configured);

/// The client transport `options` describe (not started). Throws ConfigError.
std::shared_ptr<client::ClientTransport> make_remote_transport(
    const RemoteClassifierOptions& options);

class RemoteClassifier : public classify::Classifier {
 public:
  /// Connects, discovers the tool and fetches the categories. Throws RemoteError or ConfigError.
  explicit RemoteClassifier(RemoteClassifierOptions options);
  /// Same, over a given transport (tests, custom transports). It is restarted on reconnects.
  RemoteClassifier(RemoteClassifierOptions options,
                   std::shared_ptr<client::ClientTransport> transport);
  ~RemoteClassifier() override;

  /// The server's categories (plus the fallback category). A reference stays valid for the
  /// classifier's lifetime even when a refresh replaces the set.
  const classify::CategorySet& categories() const override;
  /// Throws a RemoteError subclass; never returns an unvalidated result.
  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions& options) const override;
  using classify::Classifier::classify;
  /// Whether the server's classification tool declares `text_pair` in its inputSchema (read at
  /// each connect); classify_pairs() sends each pair as one call with it, and throws
  /// ClassifyError without it (a server would ignore an undeclared argument).
  bool takes_pairs() const override;
  std::vector<classify::Classification> classify_pairs(
      std::span<const classify::TextPair> pairs,
      const classify::ClassifyOptions& options) const override;
  /// Whether the server has a `rerank` tool taking `documents` (an mcpclass serve over a
  /// cross-encoder). rerank() calls it once with every passage; each score's logit is the
  /// server's relevance_score too (the tool does not send logits).
  bool reranks() const override;
  std::vector<classify::RerankScore> rerank(
      std::string_view query, std::span<const std::string_view> passages,
      const classify::ClassifyOptions& options) const override;
  std::string kind() const override { return "remote"; }
  bool cacheable() const override { return false; }
  json::object info() const override;

  const std::string& tool_name() const;
  /// Fetches list_categories now. Throws RemoteError.
  void refresh_categories() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::remote
