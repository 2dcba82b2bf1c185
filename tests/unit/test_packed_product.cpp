// The packed linear-layer kernel of the native encoders: every output is its own row's sum (to
// float precision against double), bit for bit the same whatever rows share the product, however
// the panels are split among threads and whichever kernel set runs it -- the property the batch
// contract rests on.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernels/packed_product.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mcpclass::kernels;

namespace {

std::vector<float> uniform(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

bool same_bits(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// `all` (the portable product of every row) against `set`'s product of the whole, of each row
// alone, of rows 4..10, of the panels in two calls, and without the bias.
void check_same_bits(KernelSet set, const std::vector<float>& packed,
                     const std::vector<float>& bias, const std::vector<float>& x, std::size_t in,
                     std::size_t out, std::size_t rows, const std::vector<float>& all) {
  const std::size_t panels = panels_of(out);
  {
    std::vector<float> whole(rows * out);
    packed_product(set, packed.data(), bias.data(), in, out, 0, panels, x.data(), rows,
                   whole.data());
    CHECK(same_bits(whole.data(), all.data(), rows * out));
  }
  // Each row alone, and rows 4..10 (other tile boundaries), give the same bits.
  {
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> one(out);
      packed_product(set, packed.data(), bias.data(), in, out, 0, panels, x.data() + r * in, 1,
                     one.data());
      CHECK(same_bits(one.data(), all.data() + r * out, out));
    }
    std::vector<float> middle(7 * out);
    packed_product(set, packed.data(), bias.data(), in, out, 0, panels, x.data() + 4 * in, 7,
                   middle.data());
    CHECK(same_bits(middle.data(), all.data() + 4 * out, 7 * out));
    // The panels in two calls, as two threads share them.
    std::vector<float> split(rows * out);
    packed_product(set, packed.data(), bias.data(), in, out, 0, panels / 2, x.data(), rows,
                   split.data());
    packed_product(set, packed.data(), bias.data(), in, out, panels / 2, panels, x.data(), rows,
                   split.data());
    CHECK(same_bits(split.data(), all.data(), rows * out));
    // Without a bias, the sums alone.
    std::vector<float> bare(rows * out);
    packed_product(set, packed.data(), nullptr, in, out, 0, panels, x.data(), rows, bare.data());
    for (std::size_t i = 0; i < rows * out; ++i) CHECK(bare[i] + bias[i % out] == all[i]);
  }
}

}  // namespace

TEST_CASE("packed product: each output is its row's sum, whatever the rows and the panel split") {
  std::mt19937 rng(31);
  const auto features = detect_cpu_features();
  // Widths below, at and past a panel (16), a tail panel of 5 and 3 outputs, the 6-row tiles'
  // every remainder (13 rows: 6 + 6 + 1), BERT-base's width, and depths over one and two blocks of
  // 256 inputs (partial sums parked and resumed), a narrow last panel among them, and 1024 inputs
  // (a 4 KiB row stride: the rows copied apart before the tiles read them, once per block of
  // inputs for every group of 8 panels: 150 outputs are two groups).
  for (const auto& [in, out] : {std::pair<std::size_t, std::size_t>{5, 37},
                                {64, 16},
                                {33, 3},
                                {768, 48},
                                {300, 21},
                                {513, 40},
                                {1024, 40},
                                {1024, 150}}) {
    CAPTURE(in);
    CAPTURE(out);
    const std::size_t rows = 13, panels = panels_of(out);
    const auto weight = uniform(out * in, rng), bias = uniform(out, rng),
               x = uniform(rows * in, rng);
    const auto packed = pack_weights(weight, in, out);
    std::vector<float> all(rows * out);
    packed_product(KernelSet::portable, packed.data(), bias.data(), in, out, 0, panels, x.data(),
                   rows, all.data());
    double worst = 0.0;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t o = 0; o < out; ++o) {
        double want = bias[o];
        for (std::size_t k = 0; k < in; ++k)
          want += static_cast<double>(x[r * in + k]) * weight[o * in + k];
        worst = std::max(worst, std::abs(all[r * out + o] - want));
      }
    CHECK(worst <= 1e-6 * static_cast<double>(in));
    for (const auto set : runnable_kernel_sets(features)) {
      CAPTURE(std::string(name(set)));
      check_same_bits(set, packed, bias, x, in, out, rows, all);
    }
  }
}

#endif  // MCPCLASS_WITH_LEARNED
