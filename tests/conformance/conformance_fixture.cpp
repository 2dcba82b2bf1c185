// The conformance fixture server: registers what tests/conformance/FIXTURE.md lists and serves
// it over stdio (newline-delimited JSON-RPC). Logs go to stderr; stdout carries only protocol.
#include "conformance_fixture.hpp"

#include "mcpclass/server/server.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/transport/server/stdio.hpp"
#include "mcpclass/util/executor.hpp"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

namespace {

void usage(std::FILE* to) {
  std::fputs(
      "usage: conformance_fixture [--stdio] | --http HOST:PORT [--stateless]\n"
      "Serves the MCP conformance fixture (the tools, resources and prompts the official\n"
      "conformance suite calls by name) over stdio (one JSON-RPC message per line) or over\n"
      "Streamable HTTP on http://HOST:PORT/mcp (PORT 0 = any free port; the bound URL is\n"
      "printed on stdout). SIGINT/SIGTERM stop the HTTP server.\n",
      to);
}

sigset_t kStopSignals;

// Serves HTTP until SIGINT/SIGTERM; prints the URL once bound.
int serve_http(const std::shared_ptr<mcpclass::server::Server>& server, std::string_view address,
               bool stateless) {
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    std::fprintf(stderr, "conformance_fixture: --http wants HOST:PORT\n");
    return 2;
  }
  mcpclass::transport::server::HttpServerOptions options;
  options.host = std::string(address.substr(0, colon));
  options.port = static_cast<unsigned short>(std::stoi(std::string(address.substr(colon + 1))));
  options.stateless = stateless;
  mcpclass::transport::server::HttpServer http(server, options);
  http.start();
  std::printf("http://%s:%u/mcp\n", options.host.c_str(), static_cast<unsigned>(http.port()));
  std::fflush(stdout);
  int signal = 0;
  sigwait(&kStopSignals, &signal);
  http.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view http_address;
  bool stateless = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    }
    if (arg == "--http" && i + 1 < argc) {
      http_address = argv[++i];
    } else if (arg == "--stateless") {
      stateless = true;
    } else if (arg != "--stdio") {
      std::fprintf(stderr, "conformance_fixture: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (!http_address.empty()) {
    // Blocked before any thread starts, so every thread inherits the mask and sigwait gets them.
    sigemptyset(&kStopSignals);
    sigaddset(&kStopSignals, SIGINT);
    sigaddset(&kStopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &kStopSignals, nullptr);
  }
  try {
    mcpclass::util::ThreadPool pool(4);
    mcpclass::server::ServerOptions options;
    options.name = std::string(mcpclass::fixture::kFixtureServerName);
    options.version = std::string(mcpclass::fixture::kFixtureServerVersion);
    auto server = mcpclass::server::Server::create(options, pool.executor());
    register_conformance_fixture(*server);
    if (!http_address.empty()) {
      const int rc = serve_http(server, http_address, stateless);
      pool.stop();
      return rc;
    }
    std::fputs("conformance_fixture: serving the conformance fixture on stdio\n", stderr);
    const int rc = mcpclass::transport::server::serve_stdio(server);
    pool.stop();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conformance_fixture: %s\n", e.what());
    return 1;
  }
}
