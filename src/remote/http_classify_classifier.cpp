// The http_classify client: one POST per text over the net layer's engine, behind a CallGuard.
#include "mcpclass/remote/http_classify_classifier.hpp"

#include "mcpclass/transport/client/http.hpp"
#include "net/http_client.hpp"
#include "remote/call_guard.hpp"
#include "remote/http_classify_answer.hpp"
#include "remote/outgoing_trace.hpp"
#include "util/env_reference.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <optional>

namespace mcpclass::remote {

namespace {

classify::CategorySet with_fallback(const classify::CategorySet& categories,
                                    const std::string& fallback) {
  if (fallback.empty() || categories.index_of(fallback)) return categories;
  std::vector<classify::Category> all(categories.begin(), categories.end());
  classify::Category c;
  c.name = fallback;
  c.description = "Fallback for results below the confidence threshold";
  all.push_back(std::move(c));
  return classify::CategorySet(std::move(all));
}

net::HttpUrl classify_url(const std::string& base) {
  try {
    net::HttpUrl url = net::parse_http_url(base);
    while (url.target.size() > 1 && url.target.back() == '/') url.target.pop_back();
    url.target = (url.target == "/" ? std::string() : url.target) + "/classify";
    return url;
  } catch (const net::HttpClientError& e) {
    throw classify::ConfigError("classifier.remote.url", e.what());
  }
}

// The configured headers (`${NAME}` expanded), then the contract's: JSON both ways, and the
// bearer key when there is one.
std::vector<std::pair<std::string, std::string>> request_headers(
    const RemoteClassifierOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  try {
    for (const auto& [name, value] : options.headers)
      out.emplace_back(name, transport::client::expand_env(value));
  } catch (const std::invalid_argument& e) {
    throw classify::ConfigError("classifier.remote.headers", e.what());
  }
  out.emplace_back("Content-Type", "application/json");
  out.emplace_back("Accept", "application/json");
  if (!options.access_key.empty())
    out.emplace_back("Authorization",
                     "Bearer " + util::resolve_env_reference(options.access_key,
                                                             "classifier.remote.access_key"));
  return out;
}

// The error a failed exchange or a refused request is: transport failures, timeouts and 5xx
// (and 429) may pass, so they are retried; a 4xx will not change on retry.
[[noreturn]] void fail(const std::string& where, const net::HttpEngine::Result& result) {
  const auto& e = result.error;
  const std::string message = fmt::format("{}: {}", where, e.message);
  switch (e.kind) {
    case net::HttpFailure::timeout:
      throw RemoteTimeout(message);
    case net::HttpFailure::certificate:
      throw RemoteUntrusted(message);
    case net::HttpFailure::unusable:
    case net::HttpFailure::protocol:
      throw RemoteProtocolError(message);
    case net::HttpFailure::too_large:
      throw RemoteInvalidResult(message);
    case net::HttpFailure::none:
      break;
    default:
      throw RemoteUnreachable(message);
  }
  const int status = result.head.status;
  const std::string refused = fmt::format("{}: the http_classify endpoint answered status {}: {}",
                                          where, status, util::excerpt(result.body));
  if (status >= 500 || status == 429 || status == 408) throw RemoteUnreachable(refused);
  throw RemoteProtocolError(refused);
}

}  // namespace

struct HttpClassifyClassifier::Impl {
  RemoteClassifierOptions options;
  classify::CategorySet categories;
  classify::RoutingPolicy policy;
  net::HttpUrl url;
  std::string where;
  std::vector<std::pair<std::string, std::string>> headers;
  net::HttpEngine engine;
  detail::CallGuard guard;

  Impl(RemoteClassifierOptions o, const classify::CategorySet& c, classify::RoutingPolicy p)
      : options(std::move(o)),
        categories(with_fallback(c, options.fallback_category)),
        policy(std::move(p)),
        url(classify_url(options.url)),
        where(url.origin() + url.target + " (http_classify)"),
        headers(request_headers(options)),
        // A connection kept per concurrent caller saves a handshake per text.
        engine(options.timeout, options.ca_file, util::limits::kMaxClientMessageBytes, 8),
        guard(options, where) {}

  // `inputs`: a text, or a sentence pair {"text", "text_pair"}.
  std::vector<double> attempt(boost::json::value inputs, const detail::OutgoingTrace& trace) {
    net::HttpRequest request;
    request.method = "POST";
    request.target = url.target;
    request.body = boost::json::serialize(boost::json::object{{"inputs", std::move(inputs)}});
    request.timeout = options.timeout;
    request.headers = headers;
    for (auto& header : trace.headers()) request.headers.push_back(std::move(header));
    const net::HttpEngine::Result result = engine.perform(url, std::move(request));
    if (result.error || result.head.status / 100 != 2) fail(where, result);
    return detail::http_classify_scores(result.body, categories, options.labels,
                                        options.fallback_category);
  }
};

HttpClassifyClassifier::HttpClassifyClassifier(RemoteClassifierOptions options,
                                               const classify::CategorySet& categories,
                                               classify::RoutingPolicy policy)
    : impl_(std::make_unique<Impl>(std::move(options), categories, std::move(policy))) {}

HttpClassifyClassifier::~HttpClassifyClassifier() = default;

const classify::CategorySet& HttpClassifyClassifier::categories() const {
  return impl_->categories;
}

classify::Classification HttpClassifyClassifier::classify(
    std::string_view text, const classify::ClassifyOptions& options) const {
  return answer(text, boost::json::string(text), options);
}

std::vector<classify::Classification> HttpClassifyClassifier::classify_pairs(
    std::span<const classify::TextPair> pairs, const classify::ClassifyOptions& options) const {
  std::vector<classify::Classification> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs)
    out.push_back(
        answer(p.text, boost::json::object{{"text", p.text}, {"text_pair", p.text_pair}}, options));
  return out;
}

classify::Classification HttpClassifyClassifier::answer(
    std::string_view text, boost::json::value inputs,
    const classify::ClassifyOptions& options) const {
  const detail::OutgoingTrace trace(options);
  auto scores = detail::traced_call(
      trace, "POST " + impl_->url.target, {{"mcpclass.endpoint", impl_->where}}, [&] {
        std::vector<double> out;
        impl_->guard.call([&] { out = impl_->attempt(inputs, trace); });
        return out;
      });
  const auto& categories = impl_->categories;
  classify::Classification c =
      classify::make_classification(text, categories, std::move(scores), impl_->policy);
  const auto fallback = categories.index_of(impl_->options.fallback_category);
  if (c.confidence < impl_->options.confidence_threshold && fallback &&
      *fallback != c.class_index) {
    c.class_index = *fallback;
    c.category = categories[*fallback].name;
    const auto routed =
        impl_->policy.apply(text, categories, *fallback, c.probabilities, c.confidence);
    c.model = routed.model;
    c.use_reasoning = routed.use_reasoning;
  }
  return c;
}

json::object HttpClassifyClassifier::info() const {
  json::object out = impl_->guard.stats();
  out["kind"] = "remote";
  out["model"] = "http_classify:" + impl_->where;
  out["index_size"] = 0;
  out["protocol"] = "http_classify";
  out["endpoint"] = impl_->where;
  out["categories"] = impl_->categories.size();
  return out;
}

}  // namespace mcpclass::remote
