// Uses the installed C++ library: classify a text with the embedded default configuration.
#include <mcpclass/classify/mcp_tools.hpp>
#include <mcpclass/config/config.hpp>

#include <cstdio>

int main() {
  const auto config = mcpclass::config::default_config();
  const auto classifier = mcpclass::config::make_classifier(config);
  const auto result = classifier->classify("What is the derivative of x squared?");
  std::printf("c++ consumer: %s %.3f %s\n", result.category.c_str(), result.confidence,
              result.model.c_str());
  return result.category == "math" ? 0 : 1;
}
