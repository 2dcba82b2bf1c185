// Test helper: the conformance fixture and the default classifier's tools behind a real
// HttpServer on 127.0.0.1 (an ephemeral port), plain HTTP or HTTPS depending on `options`.
#pragma once

#include "conformance_fixture.hpp"

#include "mcpclass/config/config.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"

#include <memory>
#include <string>
#include <utility>

namespace mcpclass::test {

struct HttpFixture {
  util::ThreadPool pool{4};
  std::shared_ptr<server::Server> server;
  std::shared_ptr<const classify::Classifier> local;
  std::unique_ptr<transport::server::HttpServer> http;
  bool tls = false;

  explicit HttpFixture(transport::server::HttpServerOptions options = {}) {
    tls = !options.tls_cert_file.empty();
    server = server::Server::create({}, pool.executor());
    register_conformance_fixture(*server);
    local = config::make_classifier(config::default_config());
    service::register_classification(*server, local);
    http = std::make_unique<transport::server::HttpServer>(server, std::move(options));
    http->start();
  }
  ~HttpFixture() {
    http->stop();
    pool.stop();
  }
  unsigned short port() const { return http->port(); }
  /// `path` on this server, e.g. url("/mcp"); `host` replaces 127.0.0.1.
  std::string url(const std::string& path, const std::string& host = "127.0.0.1") const {
    return (tls ? "https://" : "http://") + host + ":" + std::to_string(port()) + path;
  }
};

}  // namespace mcpclass::test
