// The classification server a Config describes: its classifier, the worker pool for handlers,
// and the MCP engine with the classification tools (mcp_tools.hpp). The one place that builds
// it: the CLI's `serve`, the C ABI's mcpc_server_new and so the Go and Python bindings start
// here, then attach the transports they want.
// Thread-safety: the accessors may be called from any thread; stop() and the destructor belong
// to the owner, after the transports that use server() have stopped.
#pragma once

#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace mcpclass::service {

struct ServiceOptions {
  /// Worker threads for tool handlers that do not run inline; 0 = the hardware threads, at
  /// least 2 and at most 8.
  std::size_t worker_threads = 0;
  /// Called after every successful classify_text, on the thread that ran it (see ToolOptions).
  std::function<void(const classify::Classification&)> on_classified;
};

class ClassificationService {
 public:
  /// Builds the configured classifier unless `classifier` is given, then the engine
  /// (`server.name`, `server.version`, `server.max_text_length`). Throws ConfigError.
  explicit ClassificationService(const config::Config& config,
                                 std::shared_ptr<const classify::Classifier> classifier = nullptr,
                                 ServiceOptions options = {});
  /// Stops the worker pool (stop()).
  ~ClassificationService();
  ClassificationService(const ClassificationService&) = delete;
  ClassificationService& operator=(const ClassificationService&) = delete;

  const std::shared_ptr<server::Server>& server() const noexcept { return server_; }
  const std::shared_ptr<const classify::Classifier>& classifier() const noexcept {
    return classifier_;
  }
  const config::ServerSettings& settings() const noexcept { return settings_; }
  /// `server.http` as transport options: host, port, limits, TLS files.
  transport::HttpServerOptions http_options() const;
  /// The classifier's info() (kind, model, ...): what /health reports before a front end adds
  /// its own fields.
  boost::json::object health() const { return classifier_->info(); }

  /// Prometheus text of the result cache (hits, misses, size); empty without one.
  std::string prometheus() const;
  /// Finishes the handler calls still queued and joins the workers. Idempotent.
  void stop();

 private:
  std::shared_ptr<const classify::Classifier> classifier_;
  config::ServerSettings settings_;
  util::ThreadPool pool_;
  std::shared_ptr<server::Server> server_;
};

}  // namespace mcpclass::service
