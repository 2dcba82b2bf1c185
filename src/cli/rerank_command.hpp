// `mcpclass rerank`: documents ranked for a query by a cross-encoder, printed as the rerank
// tool's JSON, computed by service::rerank like the tool's answer.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::cli {

struct RerankOptions {
  std::string config_path;  ///< Its classifier, unless --model is given.
  std::string model;        ///< A 1-label checkpoint directory: kind transformer over it.
  std::optional<std::size_t> top_n;
  bool documents = false;  ///< Repeat each document's text in its result.
  std::string query;
  std::vector<std::string> texts;
};

/// Registers the subcommand on `app`, parsing into `o`.
CLI::App* add_rerank_command(CLI::App& app, RerankOptions& o);
/// Runs it; returns an ExitCode. Never throws.
int run_rerank(const RerankOptions& o);

}  // namespace mcpclass::cli
