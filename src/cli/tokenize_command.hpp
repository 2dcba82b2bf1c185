// `mcpclass tokenize`: what a tokenizer file (tokenizer.json, vocab.txt, sentencepiece .model)
// makes of texts: ids, tokens and byte offsets, as text or JSON; --batch reads JSON Lines.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::cli {

struct TokenizeOptions {
  std::string tokenizer;
  std::vector<std::string> texts;
  bool offsets = false;
  bool json = false;
  bool batch = false;
  bool no_special = false;
  std::size_t max_length = 0;
  std::size_t stride = 0;
  std::size_t max_line_bytes = 16u << 20;
};

/// Registers the subcommand on `app`, parsing into `o`.
CLI::App* add_tokenize_command(CLI::App& app, TokenizeOptions& o);
/// Runs it; returns an ExitCode. Never throws.
int run_tokenize(const TokenizeOptions& o);

}  // namespace mcpclass::cli
