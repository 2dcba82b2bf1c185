// The native encoder's forward pass alone, one text per call, on token ids given in a file: the
// counterpart of bench/peers/encoder_forward.mjs (ONNX Runtime's session.run on the same model
// exported to ONNX, the same ids), run by bench/onnx_peer.py. Times SentenceEncoder::
// encode_tokens of batch 1 (embedding lookup, two transformer layers, pooling, dense, L2 norm;
// no tokenisation), `repeat` passes over the rows after a warm-up pass, and prints one JSON line.
// With BATCH > 1 each call encodes BATCH copies of the row (the same length, so no padding):
// what a micro-batching layer could gain per text, at best.
// usage: bench_encoder_forward ENCODER TOKENIZER IDS.jsonl THREADS REPEAT [auto|bf16|f32] [BATCH]
//   IDS.jsonl: one JSON array of token ids per line.
#include "mcpclass/learned/embedding_encoder.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace mcpclass;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::vector<std::int32_t>> read_ids(const char* path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path);
    std::exit(2);
  }
  std::vector<std::vector<std::int32_t>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::int32_t> row;
    const char* p = line.c_str();
    while (*p != '\0') {
      if (*p >= '0' && *p <= '9') {
        char* end = nullptr;
        row.push_back(static_cast<std::int32_t>(std::strtol(p, &end, 10)));
        p = end;
      } else {
        ++p;
      }
    }
    if (line.find('[') != std::string::npos) rows.push_back(std::move(row));
  }
  return rows;
}

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: %s ENCODER TOKENIZER IDS.jsonl THREADS REPEAT [auto|bf16|f32] [BATCH]\n",
                 argv[0]);
    return 2;
  }
  learned::EncoderOptions o;
  o.encoder_path = argv[1];
  o.tokenizer_path = argv[2];
  o.threads = std::stoul(argv[4]);
  const auto repeat = std::stoul(argv[5]);
  const std::string precision = argc > 6 ? argv[6] : "auto";
  const std::size_t batch = argc > 7 ? std::max<std::size_t>(1, std::stoul(argv[7])) : 1;
  o.precision = precision == "bf16"  ? learned::EncoderPrecision::bf16
                : precision == "f32" ? learned::EncoderPrecision::f32
                                     : learned::EncoderPrecision::automatic;
  const auto encoder = learned::load_sentence_encoder(o);
  const auto rows = read_ids(argv[3]);
  if (rows.empty()) {
    std::fprintf(stderr, "no rows in %s\n", argv[3]);
    return 2;
  }
  std::size_t tokens = 0;
  std::vector<std::vector<std::int32_t>> copies;
  const auto call = [&](const std::vector<std::int32_t>& r) {
    if (batch == 1) return encoder->encode_tokens(std::span(&r, 1));
    copies.assign(batch, r);
    return encoder->encode_tokens(std::span(copies));
  };
  for (const auto& r : rows) {
    call(r);  // warm-up: every padded shape compiled once
    tokens += r.size();
  }
  std::vector<double> lat;
  lat.reserve(rows.size() * repeat);
  const double cpu0 = thread_cpu_us();
  const auto t0 = Clock::now();
  for (std::size_t k = 0; k < repeat; ++k)
    for (const auto& r : rows) {
      const auto s = Clock::now();
      call(r);
      lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count());
    }
  const double total_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const double cpu_us = thread_cpu_us() - cpu0;
  std::sort(lat.begin(), lat.end());
  const auto at = [&](double q) {
    return lat[std::min(lat.size() - 1,
                        static_cast<std::size_t>(q * static_cast<double>(lat.size())))];
  };
  std::printf(
      "{\"engine\":\"native\",\"precision\":\"%s\",\"threads\":%zu,\"batch\":%zu,\"texts\":%zu,"
      "\"mean_tokens\":%.1f,\"calls\":%zu,\"mean_us\":%.1f,\"mean_us_per_text\":%.1f,\"p50_us\":%."
      "1f,\"p99_us\":%.1f,"
      "\"calling_thread_cpu_us_per_call\":%.1f}\n",
      precision.c_str(), o.threads, batch, rows.size(),
      static_cast<double>(tokens) / static_cast<double>(rows.size()), lat.size(),
      total_us / static_cast<double>(lat.size()),
      total_us / static_cast<double>(lat.size() * batch), at(0.5), at(0.99),
      cpu_us / static_cast<double>(lat.size()));
  return 0;
}
