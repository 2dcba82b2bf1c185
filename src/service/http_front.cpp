#include "mcpclass/service/http_front.hpp"

#include "service/heap_metrics.hpp"
#include "service/http_classify_app.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace mcpclass::service {

std::unique_ptr<transport::server::HttpServer> make_http_front(const ClassificationService& service,
                                                               HttpFrontOptions options) {
  transport::server::HttpServerOptions& http = options.http;
  http.extra_metrics = [&service, stdio = options.stdio, extra = std::move(http.extra_metrics)] {
    return service.prometheus() + (stdio ? stdio->prometheus() : std::string()) +
           (extra ? extra() : std::string()) + heap_metrics();
  };
  const auto started = std::chrono::steady_clock::now();
  auto health = [&service, started, stdio = options.stdio != nullptr] {
    boost::json::object h = service.health();
    boost::json::array names;
    for (const auto& c : service.classifier()->categories()) names.emplace_back(c.name);
    h["categories"] = std::move(names);
    // What `mcpclass serve` has always listed (the router dialect rides on these), so its
    // clients see no change.
    h["transports"] = stdio ? boost::json::array{"streamable-http", "sse", "stdio"}
                            : boost::json::array{"streamable-http", "sse"};
    h["uptime_seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return h;
  };
  http.apps.push_back(detail::make_http_classify_app(service, std::move(options.spans)));
  return std::make_unique<transport::server::HttpServer>(service.server(), std::move(http),
                                                         std::move(health));
}

}  // namespace mcpclass::service
