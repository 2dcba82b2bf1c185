// Uses the installed C++ library: classify a text with the embedded default configuration and,
// given `CONFIG TEXT EXPECTED`, with the classifier CONFIG describes (the learned kinds, when the
// installed tree has them).
#include <mcpclass/config/config.hpp>
#include <mcpclass/service/mcp_tools.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace {

bool classify_as(const mcpclass::config::Config& config, const char* text, const char* expected) {
  const auto classifier = mcpclass::config::make_classifier(config);
  const auto result = classifier->classify(text);
  std::printf("c++ consumer (%s): %s %.3f %s\n", classifier->kind().c_str(),
              result.category.c_str(), result.confidence, result.model.c_str());
  return result.category == expected;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (!classify_as(mcpclass::config::default_config(), "What is the derivative of x squared?",
                     "math"))
      return 1;
    if (argc == 4 && !classify_as(mcpclass::config::load_config_file(argv[1]), argv[2], argv[3]))
      return 1;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "c++ consumer: %s\n", e.what());
    return 1;
  }
}
