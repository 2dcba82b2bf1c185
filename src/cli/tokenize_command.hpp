// `mcpclass tokenize`: what a tokenizer file (tokenizer.json, vocab.txt, sentencepiece .model)
// makes of texts: ids, tokens and byte offsets, as text or JSON; --batch reads JSON Lines.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

namespace mcpclass::cli {

class TokenizeCommand {
 public:
  /// Registers the subcommand on `app`.
  explicit TokenizeCommand(CLI::App& app);
  ~TokenizeCommand();
  TokenizeCommand(const TokenizeCommand&) = delete;
  TokenizeCommand& operator=(const TokenizeCommand&) = delete;

  bool selected() const;
  /// Runs it; returns an ExitCode. Never throws.
  int run();

 private:
  struct Options;
  std::unique_ptr<Options> options_;
};

}  // namespace mcpclass::cli
