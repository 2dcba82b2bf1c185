// Latency of `kind: transformer` on one text through the public API (tokenisation, forward
// pass, softmax, the Classification); bench/transformer_peer.py times it against ONNX Runtime on
// the same model (issue 31's benchmark rows). Prints one JSON line; cpu_p50_us is the process's
// CPU time per call (every thread's), which a busy machine inflates far less than the wall time
// of a single-threaded run (with 2 threads it also counts OpenMP's spinning at barriers).
// usage: bench_transformer MODEL_DIR TEXT THREADS REPEAT [PRECISION]
// PRECISION: the classifier's `precision` (f32, int8, bf16, auto; default auto); the kernel set
// is the CPU's best unless MCPCLASS_KERNELS caps it. The JSON line names both.
#include "mcpclass/config/config.hpp"

#include <time.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace mcpclass;
using Clock = std::chrono::steady_clock;

namespace {

double process_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MODEL_DIR TEXT THREADS REPEAT [PRECISION]\n", argv[0]);
    return 2;
  }
  const std::string precision = argc > 5 ? argv[5] : "auto";
  const std::string text = argv[2];
  const auto repeat = std::max<std::size_t>(1, std::stoul(argv[4]));
  const auto config = config::config_from_json(
      boost::json::object{{"classifier", boost::json::object{{"kind", "transformer"},
                                                             {"model", argv[1]},
                                                             {"threads", std::stoi(argv[3])},
                                                             {"precision", precision},
                                                             {"max_tokens", 4096}}}});
  const auto classifier = config::make_classifier(config);
  classifier->classify(text, {});  // warm-up
  std::vector<double> us, cpu_us;
  for (std::size_t i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    const auto cpu_start = process_cpu_us();
    classifier->classify(text, {});
    cpu_us.push_back(process_cpu_us() - cpu_start);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  std::sort(cpu_us.begin(), cpu_us.end());
  const auto info = classifier->info();
  const auto field = [&](const char* key) {
    const auto* v = info.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string("?");
  };
  std::printf(
      "{\"threads\": %s, \"repeat\": %zu, \"precision\": \"%s\", \"kernels\": \"%s\", "
      "\"p50_us\": %.1f, \"p90_us\": %.1f, \"cpu_p50_us\": %.1f}\n",
      argv[3], repeat, field("precision").c_str(), field("kernels").c_str(), us[us.size() / 2],
      us[us.size() * 9 / 10], cpu_us[cpu_us.size() / 2]);
  return 0;
}
