// The C ABI's router: a thin shell over route::Router, the evaluation `mcpclass route` forwards.
#include "mcpclass/route/router.hpp"
#include "internal.hpp"
#include "mcpclass/config/config.hpp"

#include <boost/json.hpp>

struct mcpc_router {
  std::shared_ptr<const mcpclass::route::Router> router;
  std::size_t max_text_length = mcpclass::util::limits::kMaxTextLength;
};

using namespace mcpclass;
using namespace mcpclass::capi;

namespace {

route::RequestApi api_named(const char* api) {
  require(api, "api");
  const std::string_view name(api);
  if (name == "chat_completions") return route::RequestApi::chat_completions;
  if (name == "messages") return route::RequestApi::messages;
  if (name == "responses") return route::RequestApi::responses;
  fail(MCPC_ERR_INVALID_ARGUMENT,
       "api must be \"chat_completions\", \"messages\" or \"responses\", not \"" +
           std::string(name) + "\"");
}

}  // namespace

int mcpc_router_new(const mcpc_config* config, const mcpc_classifier* classifier, mcpc_router** out,
                    mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(config, "config");
    const auto& c = config->config;
    if (!c.route) throw classify::ConfigError("route", "is not configured (the upstream models)");
    std::shared_ptr<const classify::Classifier> cls =
        classifier ? classifier->classifier
                   : std::shared_ptr<const classify::Classifier>(config::make_classifier(c));
    auto handle = std::make_unique<mcpc_router>();
    handle->router = std::make_shared<const route::Router>(
        *c.route, c.router,
        route::make_signal_models(
            c, cls, classifier ? std::optional(classifier->provenance) : std::nullopt));
    handle->max_text_length = c.server.max_text_length;
    *out = handle.release();
    return MCPC_OK;
  });
}

void mcpc_router_free(mcpc_router* router) {
  delete router;
}

int mcpc_route_evaluate_json(const mcpc_router* router, const char* request_json,
                             size_t request_len, int explain, char** out_json, mcpc_error** err) {
  return mcpc_route_evaluate_api_json(router, "chat_completions", request_json, request_len,
                                      explain, out_json, err);
}

int mcpc_route_evaluate_api_json(const mcpc_router* router, const char* api,
                                 const char* request_json, size_t request_len, int explain,
                                 char** out_json, mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(router, "router");
    const auto request_api = api_named(api);
    const auto text = text_arg(request_json, request_len, "request_json");
    boost::system::error_code ec;
    auto parsed = boost::json::parse(text, ec);
    if (ec || !parsed.is_object())
      fail(MCPC_ERR_INVALID_TEXT, "request_json must be a JSON object (a request body)");
    const auto e = router->router->evaluate(std::move(parsed.get_object()), router->max_text_length,
                                            explain != 0, nullptr, request_api);
    *out_json = dup_string(boost::json::serialize(e.to_json()));
    return MCPC_OK;
  });
}
