// The C++ API in one program: read a configuration, build its classifier, classify a text.
//   example_classify CONFIG TEXT   e.g. example_classify classifier.yaml "What is 2 + 2?"
// Prints `category confidence model reasoning=0|1`, one line. A configuration the library
// refuses (unknown key, bad value, unreadable file) ends the program with its message, exit 1.
#include <mcpclass/config/config.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: example_classify CONFIG TEXT\n", stderr);
    return 2;
  }
  try {
    // load_config_file reads YAML or JSON and checks every key (ConfigError names the bad one);
    // config::default_config() is the embedded default instead.
    const auto config = mcpclass::config::load_config_file(argv[1]);
    // The classifier `classifier.kind` names. Its const members are thread-safe: build it once,
    // share it between threads.
    const auto classifier = mcpclass::config::make_classifier(config);
    const auto result = classifier->classify(argv[2]);
    std::printf("%s %.3f %s reasoning=%d\n", result.category.c_str(), result.confidence,
                result.model.c_str(), result.use_reasoning ? 1 : 0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_classify: %s\n", e.what());
    return 1;
  }
}
