// Latency, throughput and memory of a learned classifier (not a timed test): p50/p95 of single
// classify() calls for ~20-token and ~60-token queries (wall time and the calling thread's CPU
// time, which a loaded machine disturbs less), batch encode throughput, and RSS.
// usage: bench_learned CONFIG QUESTIONS.jsonl [threads]
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_examples.hpp"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace mcpclass;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0
                   : v[std::min(v.size() - 1,
                                static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

std::string rss(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0)
      return line.substr(line.find_first_not_of(" \t", std::string(key).size()));
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CONFIG QUESTIONS.jsonl [threads]\n", argv[0]);
    return 2;
  }
  auto cfg = config::load_config_file(argv[1]);
  const std::size_t threads = argc > 3 ? std::stoul(argv[3]) : 1;
  cfg.classifier.learned.threads = threads;
  std::printf("RSS before load: %s\n", rss("VmRSS:").c_str());
  auto t0 = Clock::now();
  const auto classifier = config::make_classifier(cfg);
  std::printf("load: %.0f ms, RSS after load: %s\n", ms_since(t0), rss("VmRSS:").c_str());

  const auto& s = cfg.classifier.learned;
  const auto encoder = learned::load_sentence_encoder({learned::resolve_model_path(s.encoder),
                                                       learned::resolve_model_path(s.tokenizer),
                                                       s.max_tokens, 64, threads});
  const auto rows = learned::read_labelled_examples(argv[2]);
  std::vector<std::string> short_q, long_q, all;
  for (const auto& r : rows) {
    const auto n = encoder->token_ids(r.text).size();
    if (n >= 18 && n <= 22 && short_q.size() < 300) short_q.push_back(r.text);
    if (n >= 57 && n <= 63 && long_q.size() < 300) long_q.push_back(r.text);
    if (all.size() < 2048) all.push_back(r.text);
  }
  for (int i = 0; i < 20; ++i)
    classifier->classify(short_q[static_cast<std::size_t>(i)]);  // warm-up
  for (const auto* set : {&short_q, &long_q}) {
    std::vector<double> lat, cpu;
    for (const auto& q : *set) {
      const double c0 = thread_cpu_ms();
      t0 = Clock::now();
      classifier->classify(q);
      lat.push_back(ms_since(t0));
      cpu.push_back(thread_cpu_ms() - c0);
    }
    std::printf(
        "%s-token queries (n=%zu, threads=%zu): p50 %.2f ms, p95 %.2f ms; CPU p50 %.2f ms\n",
        set == &short_q ? "~20" : "~60", set->size(), threads, percentile(lat, 0.5),
        percentile(lat, 0.95), percentile(cpu, 0.5));
  }
  std::printf("RSS after the single queries: %s\n", rss("VmRSS:").c_str());
  t0 = Clock::now();
  encoder->encode(all);
  const double sec = ms_since(t0) / 1000.0;
  std::printf("batch encode (batch 64, MMLU questions): %.0f texts/s\n",
              static_cast<double>(all.size()) / sec);
  std::printf("RSS now: %s, peak: %s\n", rss("VmRSS:").c_str(), rss("VmHWM:").c_str());
  ::malloc_trim(0);  // how much of that is free heap glibc kept
  std::printf("RSS after malloc_trim: %s\n", rss("VmRSS:").c_str());
  return 0;
}
