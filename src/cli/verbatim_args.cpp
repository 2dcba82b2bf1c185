#include "cli/verbatim_args.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::cli {

namespace {

// Put before an argument CLI11 would split, and before one that starts with it already, so that
// removing one leading mark gives every argument back exactly.
constexpr char kMark = '\x1f';  // ASCII unit separator: no one types it

bool needs_mark(std::string_view arg) {
  return (arg.size() >= 2 && arg.front() == '[' && arg.back() == ']') ||
         (!arg.empty() && arg.front() == kMark);
}

void unescape_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    option->transform([](std::string value) {
      if (!value.empty() && value.front() == kMark) value.erase(0, 1);
      return value;
    });
  // Every subcommand, parsed or not (get_subcommands() alone lists only the parsed ones).
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) unescape_values(*sub);
}

}  // namespace

void parse_verbatim(CLI::App& app, int argc, char** argv) {
  unescape_values(app);
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i)
    if (needs_mark(args[i])) args[i].insert(args[i].begin(), kMark);
  std::vector<const char*> pointers;
  for (const auto& a : args) pointers.push_back(a.c_str());
  app.parse(argc, pointers.data());
}

}  // namespace mcpclass::cli
