#include "cli/rerank_command.hpp"

#include "cli/app.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/service/reranking.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::cli {

CLI::App* add_rerank_command(CLI::App& app, RerankOptions& o) {
  auto* command = app.add_subcommand(
      "rerank",
      "Rank documents for a query with a cross-encoder reranker and print {results: [{index, "
      "relevance_score, document?}]}, best first, as the rerank tool answers");
  command->add_option("query", o.query, "The query")->required();
  command->add_option("document", o.texts, "The documents (passages) to rank")->required();
  command->add_option("-c,--config", o.config_path, "Configuration whose classifier to use")
      ->check(CLI::ExistingFile);
  command->add_option("--model", o.model,
                      "A 1-label cross-encoder checkpoint directory (instead of the config's "
                      "classifier)");
  command->add_option("--top-n", o.top_n, "Print the best N only")->check(CLI::PositiveNumber);
  command->add_flag("--documents", o.documents, "Repeat each document's text in its result");
  return command;
}

int run_rerank(const RerankOptions& o) {
  std::shared_ptr<const classify::Classifier> classifier;
  service::RerankLimits limits;
  try {
    auto config = load_config(o.config_path);
    limits = {config.server.max_text_length, config.server.max_rerank_documents};
    if (!o.model.empty())
      config = config::config_from_json(boost::json::object{
          {"server", config.to_json().at("server")},
          {"classifier", boost::json::object{{"kind", "transformer"}, {"model", o.model}}}});
    classifier = config::make_classifier(config);
  } catch (const config::ConfigError& e) {
    fmt::print(stderr, "mcpclass rerank: configuration error: {}\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {  // a checkpoint that fails to load, like `classify`
    fmt::print(stderr, "mcpclass rerank: {}\n", e.what());
    return kRuntimeError;
  }
  service::RerankRequest request;
  request.query = o.query;
  request.documents.assign(o.texts.begin(), o.texts.end());
  request.top_n = o.top_n;
  try {
    fmt::print("{}\n", boost::json::serialize(service::rerank_results(
                           service::rerank(*classifier, request, limits), request, o.documents)));
  } catch (const service::RerankRequestError& e) {
    fmt::print(stderr, "mcpclass rerank: {}\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass rerank: {}\n", e.what());
    return kRuntimeError;
  }
  return kOk;
}

}  // namespace mcpclass::cli
