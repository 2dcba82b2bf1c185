// The learned-classifier subcommands of `mcpclass`: `model convert`, `model inspect`, `index`,
// `train`, `eval`.
// They read their own options and config, so main() dispatches to them before loading a config.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

namespace mcpclass::cli {

class LearnedCommands {
 public:
  /// Registers the subcommands on `app`.
  explicit LearnedCommands(CLI::App& app);
  ~LearnedCommands();
  LearnedCommands(const LearnedCommands&) = delete;
  LearnedCommands& operator=(const LearnedCommands&) = delete;

  /// True when the parsed command line chose one of them.
  bool selected() const;
  /// Runs the chosen one; returns an ExitCode. Never throws.
  int run();

 private:
  struct Options;
  std::unique_ptr<Options> options_;
};

}  // namespace mcpclass::cli
