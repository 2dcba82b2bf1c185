// The client the MCP conformance suite drives: `conformance_client <server-url>` with the scenario
// in MCP_CONFORMANCE_SCENARIO (initialize, tools_call, elicitation-sep1034-client-defaults,
// sse-retry, auth/*). Auth scenarios get OAuth with the headless authorization helper and the
// credentials of MCP_CONFORMANCE_CONTEXT (client_id, client_secret, private_key_pem,
// signing_algorithm, idp_* for cross-app access), then list the tools and call the first. Exits 0
// when the scenario's client side completed.
#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/client/client.hpp"
#include "mcpclass/transport/client/http.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

namespace json = boost::json;
using namespace mcpclass;

namespace {

std::string context_string(const json::object& context, const char* key) {
  const auto* v = context.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// The OAuth options of an auth/* scenario.
auth::OAuthOptions oauth_for(const std::string& scenario) {
  auth::OAuthOptions oauth;
  json::object context;
  if (const char* text = std::getenv("MCP_CONFORMANCE_CONTEXT"); text != nullptr) {
    std::error_code ec;
    auto v = json::parse(text, ec);
    if (!ec && v.is_object()) context = v.get_object();
  }
  oauth.client_id = context_string(context, "client_id");
  oauth.client_secret = context_string(context, "client_secret");
  oauth.private_key_pem = context_string(context, "private_key_pem");
  if (auto alg = context_string(context, "signing_algorithm"); !alg.empty())
    oauth.signing_algorithm = alg;
  if (scenario.starts_with("auth/client-credentials"))
    oauth.grant = auth::OAuthOptions::Grant::client_credentials;
  oauth.idp_token_endpoint = context_string(context, "idp_token_endpoint");
  oauth.idp_id_token = context_string(context, "idp_id_token");
  oauth.idp_client_id = context_string(context, "idp_client_id");
  if (!oauth.idp_token_endpoint.empty()) oauth.grant = auth::OAuthOptions::Grant::cross_app_access;
  // The document the suite expects a CIMD-capable client to name (it is not fetched).
  oauth.client_metadata_url = "https://conformance-test.local/client-metadata.json";
  oauth.client_name = "mcpclass-conformance-client";
  oauth.timeout = std::chrono::seconds(10);
  return oauth;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: conformance_client <server-url>\n";
    return 2;
  }
  const char* env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = env != nullptr ? env : "initialize";

  client::ClientOptions options;
  options.name = "mcpclass-conformance-client";
  options.version = mcpclass::kVersion;
  options.request_timeout = std::chrono::seconds(10);
  options.callbacks.on_log = [](std::string_view line) { std::cerr << "log: " << line << "\n"; };
  options.callbacks.elicitation = [](const client::ElicitationRequest& request) {
    std::cerr << "elicitation: " << request.message << "\n";
    return client::ElicitationResponse{"accept", {}};  // the engine fills in schema defaults
  };
  options.callbacks.sampling = [](const json::object&) {
    return json::object{{"role", "assistant"},
                        {"content", json::object{{"type", "text"}, {"text", "sampled"}}},
                        {"model", "mcpclass-conformance"},
                        {"stopReason", "endTurn"}};
  };

  transport::client::HttpClientOptions http;
  http.url = argv[1];
  const bool auth = scenario.starts_with("auth/");
  if (auth) http.oauth = oauth_for(scenario);
  client::Client c(transport::client::make_streamable_http_transport(http), options);
  try {
    const auto& server = c.connect();
    std::cerr << "connected: " << json::serialize(server.server_info) << " "
              << server.protocol_version << "\n";
    const json::array tools = c.list_tools();
    std::cerr << "tools: " << tools.size() << "\n";
    json::object result;
    if (scenario == "tools_call") {
      result = c.call_tool("add_numbers", json::object{{"a", 5}, {"b", 3}});
    } else if (scenario == "elicitation-sep1034-client-defaults") {
      result = c.call_tool("test_client_elicitation_defaults", json::object{});
    } else if (scenario == "sse-retry") {
      result = c.call_tool("test_reconnection", json::object{});
    } else if (auth && !tools.empty() && tools[0].is_object()) {
      const auto* name = tools[0].get_object().if_contains("name");
      if (name != nullptr && name->is_string())
        result = c.call_tool(std::string(name->get_string()), json::object{});
    }
    if (!result.empty()) std::cerr << "result: " << json::serialize(result) << "\n";
    c.close();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "conformance_client: " << e.what() << "\n";
    return 1;
  }
}
