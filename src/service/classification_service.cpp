#include "mcpclass/service/classification_service.hpp"

#include "mcpclass/service/http_options.hpp"
#include "mcpclass/service/mcp_tools.hpp"

#include <algorithm>
#include <thread>

namespace mcpclass::service {

namespace {

std::size_t worker_threads(std::size_t requested) {
  if (requested != 0) return requested;
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 8);
}

}  // namespace

ClassificationService::ClassificationService(const config::Config& config,
                                             std::shared_ptr<const classify::Classifier> classifier,
                                             ServiceOptions options)
    : classifier_(classifier ? std::move(classifier)
                             : std::shared_ptr<const classify::Classifier>(
                                   config::make_classifier(config))),
      settings_(config.server),
      pool_(worker_threads(options.worker_threads)) {
  server::ServerOptions server_options;
  server_options.name = settings_.name;
  server_options.version = settings_.version;
  server_options.instructions =
      "Call classify_text to classify a query and get the recommended model and reasoning "
      "setting; list_categories gives the categories in class-index order.";
  server_ = server::Server::create(server_options, pool_.executor());
  register_classification(*server_, classifier_,
                          {.max_text_length = settings_.max_text_length,
                           .on_classified = std::move(options.on_classified)});
}

ClassificationService::~ClassificationService() {
  stop();
}

transport::HttpServerOptions ClassificationService::http_options() const {
  return http_server_options(settings_.http);
}

void ClassificationService::stop() {
  pool_.stop();
}

}  // namespace mcpclass::service
