// An MCP server over HTTP with the C++ API: the classifier of a configuration served as the
// tools `classify_text` and `list_categories` (plus its prompts and categories resource), one
// tool of the host's own beside them, on Streamable HTTP at http://HOST:PORT/mcp with GET /health
// and GET /metrics — what `mcpclass serve --http` starts, in your program.
//   example_serve_http CONFIG [HOST:PORT]   (default: the configuration's server.http host and
//   port; port 0 = any free port)
// Prints the bound URL on stdout once it accepts connections; SIGINT or SIGTERM stops it, exit 0.
#include <mcpclass/config/config.hpp>
#include <mcpclass/server/server.hpp>
#include <mcpclass/service/classification_service.hpp>
#include <mcpclass/service/http_front.hpp>

#include <pthread.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace {

// A tool of the host's: `word_count {text}` → the number of whitespace-separated words.
mcpclass::server::Tool word_count_tool() {
  namespace json = boost::json;
  mcpclass::server::Tool tool;
  tool.name = "word_count";
  tool.description = "Counts the whitespace-separated words of a text";
  tool.input_schema = {{"type", "object"},
                       {"properties", {{"text", {{"type", "string"}}}}},
                       {"required", json::array{"text"}}};
  tool.handler = [](const json::object& args, mcpclass::server::RequestContext&) {
    // The engine has checked `args` against input_schema: text is a string.
    std::istringstream words(std::string(args.at("text").as_string()));
    std::size_t count = 0;
    for (std::string word; words >> word;) ++count;
    return mcpclass::server::ToolResult::text(std::to_string(count));
  };
  // Microseconds and never blocks: run on the I/O thread, not the worker pool.
  tool.run_inline = true;
  return tool;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fputs("usage: example_serve_http CONFIG [HOST:PORT]\n", stderr);
    return 2;
  }
  // Blocked before the server starts its threads, so they inherit the mask and only sigwait
  // below receives the stop signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    const auto config = mcpclass::config::load_config_file(argv[1]);
    // The classifier, the MCP engine with its tools and the worker pool, from `config`.
    mcpclass::service::ClassificationService service(config);
    service.server()->add_tool(word_count_tool());

    // `server.http` of the configuration (host, port, limits, auth); the command line may
    // override the address.
    auto http = service.http_options();
    if (argc == 3) {
      const std::string_view address = argv[2];
      const auto colon = address.rfind(':');
      unsigned short port = 0;
      const auto digits = colon == address.npos ? address.end() : address.begin() + colon + 1;
      const auto [end, error] = std::from_chars(digits, address.end(), port);
      if (digits == address.end() || error != std::errc() || end != address.end())
        throw std::invalid_argument("want HOST:PORT with PORT in 0..65535, got '" +
                                    std::string(address) + "'");
      http.host = address.substr(0, colon);
      http.port = port;
    }
    mcpclass::service::HttpFrontOptions front_options;
    front_options.http = http;
    const auto front = mcpclass::service::make_http_front(service, std::move(front_options));
    front->start();  // binds; throws when the port is taken or the host cannot be served
    std::printf("http://%s:%u/mcp\n", http.host.c_str(), static_cast<unsigned>(front->port()));
    std::fflush(stdout);

    int signal = 0;
    sigwait(&stop_signals, &signal);
    front->stop();  // finishes the requests in flight, closes the sessions
    service.stop();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_serve_http: %s\n", e.what());
    return 1;
  }
}
