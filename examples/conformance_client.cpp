// The client the MCP conformance suite drives: `conformance_client <server-url>` with the scenario
// in MCP_CONFORMANCE_SCENARIO (initialize, tools_call, elicitation-sep1034-client-defaults,
// sse-retry). Exits 0 when the scenario's client side completed.
#include "mcpclass/client/client.hpp"
#include "mcpclass/transport/client_http.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

namespace json = boost::json;
using namespace mcpclass;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: conformance_client <server-url>\n";
    return 2;
  }
  const char* env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = env != nullptr ? env : "initialize";

  client::ClientOptions options;
  options.name = "mcpclass-conformance-client";
  options.version = "0.1.0";
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

  transport::HttpClientOptions http;
  http.url = argv[1];
  client::Client c(transport::make_streamable_http_transport(http), options);
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
    }
    if (!result.empty()) std::cerr << "result: " << json::serialize(result) << "\n";
    c.close();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "conformance_client: " << e.what() << "\n";
    return 1;
  }
}
