// `mcpclass detect`: the labelled spans (PII) a token-classification checkpoint finds in texts,
// one JSON object a text, computed by service::detect_spans like the MCP tool's answer.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::cli {

struct DetectOptions {
  std::string config_path;  ///< Its `token_classifier` section, unless --model is given.
  std::string model;
  std::string aggregation;  ///< Empty: the configured strategy.
  std::optional<std::size_t> stride;
  std::vector<std::string> texts;
};

/// Registers the subcommand on `app`, parsing into `o`.
CLI::App* add_detect_command(CLI::App& app, DetectOptions& o);
/// Runs it; returns an ExitCode. Never throws.
int run_detect(const DetectOptions& o);

}  // namespace mcpclass::cli
