// Tokenizer throughput: encodes every text of a JSON-lines file (one JSON string per line) with
// a tokenizer file, on one thread, and prints {"texts", "runs", "seconds": [...]} as JSON.
// bench/tokenizers.mjs runs it next to the reference library; see bench/results/tokenizers.md.
//
//   bench_tokenizer TOKENIZER TEXTS.jsonl [RUNS]
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER TEXTS.jsonl [RUNS]\n", argv[0]);
    return 2;
  }
  try {
    const auto tokenizer = mcpclass::tokenizers::open_text_tokenizer(argv[1]);
    std::vector<std::string> texts;
    std::ifstream in(argv[2]);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) texts.emplace_back(boost::json::parse(line).as_string());
    const int runs = argc > 3 ? std::stoi(argv[3]) : 5;
    std::size_t tokens = 0;
    for (const auto& t : texts) tokens += tokenizer->encode(t).ids.size();  // warm-up
    boost::json::array seconds;
    for (int r = 0; r < runs; ++r) {
      const auto start = std::chrono::steady_clock::now();
      std::size_t n = 0;
      for (const auto& t : texts) n += tokenizer->encode(t).ids.size();
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (n != tokens) throw std::runtime_error("token count changed between runs");
    }
    boost::json::object out{
        {"texts", texts.size()}, {"tokens", tokens}, {"runs", runs}, {"seconds", seconds}};
    std::printf("%s\n", boost::json::serialize(out).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tokenizer: %s\n", e.what());
    return 1;
  }
}
