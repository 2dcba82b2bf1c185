// The engine's dense products alone, one thread, on the shapes of a BERT-base layer (QKV, the
// attention output, the FFN's two products) at 32 and 128 rows: the rate each kernel set reaches
// per precision, against that set's peak per core (bench_units measures it; bench/results/
// kernels.md quotes both). Prints one JSON line per (set, precision, shape).
// usage: bench_kernels [SECONDS_PER_CASE] [GHZ]
// GHZ is the core clock the peak is computed at (default: /proc/cpuinfo's "cpu MHz").
#include "kernels/bf16gemm.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/packed_product.hpp"
#include "kernels/qgemm.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace mcpclass::kernels;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape {
  const char* name;
  std::size_t rows, in, out;
};

double cpuinfo_ghz() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("cpu MHz", 0) == 0) return std::stod(line.substr(line.find(':') + 1)) / 1000.0;
  return 0.0;
}

double run_for(double seconds, auto&& call) {
  call();
  std::size_t n = 0;
  const auto start = Clock::now();
  double elapsed = 0.0;
  do {
    call();
    ++n;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return elapsed / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::stod(argv[1]) : 0.5;
  const double ghz = argc > 2 ? std::stod(argv[2]) : cpuinfo_ghz();
  const auto features = detect_cpu_features();
  const Shape shapes[] = {{"qkv", 32, 768, 2304},      {"ffn_up", 32, 768, 3072},
                          {"ffn_down", 32, 3072, 768}, {"qkv", 128, 768, 2304},
                          {"ffn_up", 128, 768, 3072},  {"ffn_down", 128, 3072, 768}};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  for (const auto set : runnable_kernel_sets(features)) {
    if (set == KernelSet::portable) continue;
    for (const auto& s : shapes) {
      std::vector<float> w(s.in * s.out), x(s.rows * s.in), bias(s.out, 0.01f), y(s.rows * s.out);
      for (auto& v : w) v = normal(rng);
      for (auto& v : x) v = normal(rng);
      const double macs = static_cast<double>(s.rows * s.in * s.out);
      const auto report = [&](const char* precision, double per_call) {
        boost::json::object o{{"set", std::string(name(set))},
                              {"precision", precision},
                              {"shape", s.name},
                              {"rows", s.rows},
                              {"in", s.in},
                              {"out", s.out},
                              {"us", per_call * 1e6},
                              {"gops", 2.0 * macs / per_call / 1e9},
                              {"ghz", ghz}};
        std::printf("%s\n", boost::json::serialize(o).c_str());
        std::fflush(stdout);
      };
      // f32 only once per vector width (avx2, avx512): the other sets run the same tiles.
      if (set == KernelSet::avx2 || set == KernelSet::avx512) {
        const auto packed = pack_weights(w, s.in, s.out);
        report("f32", run_for(seconds, [&] {
                 packed_product(set, packed.data(), bias.data(), s.in, s.out, 0, panels_of(s.out),
                                x.data(), s.rows, y.data());
               }));
      }
      if (set != KernelSet::avx512) {
        const auto qw = quantize_weights(w, s.in, s.out);
        std::vector<std::int8_t> q(s.rows * quantized_depth(s.in));
        std::vector<float> scale(s.rows);
        report("int8", run_for(seconds, [&] {
                 quantize_rows(set, x.data(), s.rows, s.in, q.data(), scale.data());
                 qgemm(set, qw, bias.data(), 0, qpanels_of(s.out), q.data(), scale.data(), s.rows,
                       y.data());
               }));
      }
      if (set == KernelSet::avx512_bf16 || set == KernelSet::amx) {
        const auto bw = pack_bf16_weights(w, s.in, s.out);
        std::vector<std::uint16_t> xb(s.rows * bf16_depth(s.in));
        report("bf16", run_for(seconds, [&] {
                 bf16_rows(set, x.data(), s.rows, s.in, xb.data());
                 bf16gemm(set, bw, bias.data(), 0, bpanels_of(s.out), xb.data(), s.rows, y.data());
               }));
      }
    }
  }
  return 0;
}
