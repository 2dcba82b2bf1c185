// The C ABI's token classification: a thin shell over service::detect_spans, the function the
// MCP tool and `mcpclass detect` answer with.
#include "mcpclass/learned/token_classifier.hpp"
#include "internal.hpp"
#include "mcpclass/service/token_spans.hpp"

#include <boost/json.hpp>

struct mcpc_token_classifier {
  std::shared_ptr<const mcpclass::learned::TokenClassifier> classifier;
  std::size_t max_text_length = mcpclass::util::limits::kMaxTextLength;
};

using namespace mcpclass;
using namespace mcpclass::capi;

int mcpc_token_classifier_new(const mcpc_config* config, mcpc_token_classifier** out,
                              mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(config, "config");
    const auto& settings = config->config.token_classifier;
    if (!settings)
      throw classify::ConfigError(
          "token_classifier",
          "is not configured (a section {model: DIR, aggregation, ...} or {remote: {...}})");
    auto handle = std::make_unique<mcpc_token_classifier>();
    handle->classifier = config::make_token_classifier(config->config);
    handle->max_text_length = config->config.server.max_text_length;
    *out = handle.release();
    return MCPC_OK;
  });
}

void mcpc_token_classifier_free(mcpc_token_classifier* classifier) {
  delete classifier;
}

int mcpc_detect_spans_json(const mcpc_token_classifier* classifier, const char* text,
                           size_t text_len, const char* aggregation, char** out_json,
                           mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(classifier, "classifier");
    const auto t = text_arg(text, text_len, "text");
    std::optional<std::string_view> strategy;
    if (aggregation != nullptr) {
      if (!learned::parse_token_aggregation(aggregation))
        fail(MCPC_ERR_INVALID_ARGUMENT, std::string("aggregation must be none, simple, first, "
                                                    "average or max (got '") +
                                            aggregation + "')");
      strategy = aggregation;
    }
    try {
      *out_json = dup_string(boost::json::serialize(service::detect_spans(
          *classifier->classifier, t, strategy, classifier->max_text_length)));
    } catch (const service::SpanRequestError& e) {
      fail(MCPC_ERR_INVALID_TEXT, e.what());
    }
    return MCPC_OK;
  });
}
