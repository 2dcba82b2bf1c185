// CLI11 2.1 reads an argument written "[a,b]" as the list a, b for any option or positional that
// takes several values, so `mcpclass tokenize "[CLS]"` tokenized "CLS", and no setting turns that
// off. The command line goes to CLI11 with such arguments escaped, and every option takes its
// values back unescaped, so that texts (and any other value) arrive as typed.
#pragma once

namespace CLI {
class App;
}

namespace mcpclass::cli {

/// app.parse(argc, argv), every argument kept as it is. Call once every option is declared.
/// Throws what CLI::App::parse throws.
void parse_verbatim(CLI::App& app, int argc, char** argv);

}  // namespace mcpclass::cli
