#include "cli/tokenize_command.hpp"

#include "cli/app.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <cstdio>
#include <iostream>

namespace mcpclass::cli {

CLI::App* add_tokenize_command(CLI::App& app, TokenizeOptions& o) {
  auto* command = app.add_subcommand(
      "tokenize", "Print the token ids, tokens and offsets a tokenizer file gives texts");
  command
      ->add_option("--tokenizer", o.tokenizer,
                   "tokenizer.json, BERT vocab.txt or sentencepiece .model")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("text", o.texts, "Texts to tokenize");
  command->add_flag("--offsets", o.offsets, "Also print each token's byte offsets in the text");
  command->add_flag("--json", o.json, "One JSON object per text");
  command->add_flag("--batch", o.batch,
                    "Read texts from stdin, one JSON string (or a [text, text_pair] sentence "
                    "pair) per line; write one JSON object per line (implies --json)");
  command->add_flag("--no-special-tokens", o.no_special,
                    "Do not add the post-processor's special tokens");
  command->add_option("--max-length", o.max_length,
                      "Truncate to this many tokens; the rest comes as overflowing windows");
  command->add_option("--stride", o.stride,
                      "Tokens each overflowing window repeats from the previous one");
  command->add_option("--max-line-bytes", o.max_line_bytes,
                      "--batch: refuse a stdin line longer than this (default 16 MiB)");
  return command;
}

namespace {

boost::json::object to_json(const tokenizers::TokenizedText& t, bool offsets,
                            bool type_ids = false) {
  boost::json::object o;
  boost::json::array ids, tokens;
  for (auto id : t.ids) ids.push_back(id);
  for (const auto& s : t.tokens) tokens.push_back(boost::json::string(s));
  o["ids"] = std::move(ids);
  if (!t.tokens.empty()) o["tokens"] = std::move(tokens);
  if (type_ids) {
    boost::json::array types;
    for (auto id : t.type_ids) types.push_back(id);
    o["type_ids"] = std::move(types);
  }
  if (offsets && !t.offsets.empty()) {
    boost::json::array offs;
    for (const auto& [b, e] : t.offsets) offs.push_back(boost::json::array{b, e});
    o["offsets"] = std::move(offs);
  }
  if (!t.overflowing.empty()) {
    boost::json::array over;
    for (const auto& w : t.overflowing) over.push_back(to_json(w, offsets));
    o["overflowing"] = std::move(over);
  }
  return o;
}

void print_text(const tokenizers::TokenizedText& t, bool offsets, const std::string& indent) {
  std::string line = indent + "ids:";
  for (auto id : t.ids) line += fmt::format(" {}", id);
  fmt::print("{}\n", line);
  if (!t.tokens.empty()) {
    line = indent + "tokens:";
    for (const auto& s : t.tokens) line += " " + boost::json::serialize(boost::json::string(s));
    fmt::print("{}\n", line);
  }
  if (offsets && !t.offsets.empty()) {
    line = indent + "offsets:";
    for (const auto& [b, e] : t.offsets) line += fmt::format(" {}-{}", b, e);
    fmt::print("{}\n", line);
  }
  for (std::size_t k = 0; k < t.overflowing.size(); ++k) {
    fmt::print("{}window {}:\n", indent, k + 1);
    print_text(t.overflowing[k], offsets, indent + "  ");
  }
}

}  // namespace

int run_tokenize(const TokenizeOptions& o) {
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer;
  try {
    tokenizers::TokenizerOptions options;
    options.max_length = o.max_length;
    options.stride = o.stride;
    tokenizer = tokenizers::open_text_tokenizer(o.tokenizer, options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass tokenize: {}\n", e.what());
    return kUsageError;
  }
  const bool add_special = !o.no_special;
  if (o.batch) {
    std::string line;
    std::size_t n = 0;
    std::string out;
    while (std::getline(std::cin, line)) {
      ++n;
      if (line.size() > o.max_line_bytes) {
        fmt::print(stderr,
                   "mcpclass tokenize: stdin line {} is {} bytes, over --max-line-bytes {}\n", n,
                   line.size(), o.max_line_bytes);
        return kUsageError;
      }
      boost::system::error_code ec;
      // Invalid UTF-8 inside a string reaches the tokenizer, which names it on that line.
      boost::json::parse_options parse_options;
      parse_options.allow_invalid_utf8 = true;
      const auto v = boost::json::parse(line, ec, {}, parse_options);
      // A sentence pair is [text, text_pair]; its answer also gives the token types.
      const bool pair = !ec && v.is_array() && v.get_array().size() == 2 &&
                        v.get_array()[0].is_string() && v.get_array()[1].is_string();
      if (ec || (!v.is_string() && !pair)) {
        fmt::print(stderr,
                   "mcpclass tokenize: stdin line {} is not a JSON string or a [text, text_pair] "
                   "pair of strings\n",
                   n);
        return kUsageError;
      }
      try {
        out = boost::json::serialize(
            pair ? to_json(tokenizer->encode_pair(v.get_array()[0].get_string(),
                                                  v.get_array()[1].get_string(), add_special),
                           o.offsets, true)
                 : to_json(tokenizer->encode(v.get_string(), add_special), o.offsets));
      } catch (const classify::ClassifyError& e) {
        boost::json::object err;
        err["error"] = e.what();
        out = boost::json::serialize(err);
      }
      out.push_back('\n');
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return kOk;
  }
  int status = kOk;
  for (const auto& text : o.texts) {
    try {
      const auto t = tokenizer->encode(text, add_special);
      if (o.json)
        fmt::print("{}\n", boost::json::serialize(to_json(t, o.offsets)));
      else
        print_text(t, o.offsets, "");
    } catch (const classify::ClassifyError& e) {
      fmt::print(stderr, "mcpclass tokenize: {}\n", e.what());
      status = kRuntimeError;
    }
  }
  return status;
}

}  // namespace mcpclass::cli
