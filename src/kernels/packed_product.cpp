#include "kernels/packed_product.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace mcpclass::kernels {

namespace {

// The blocking of one thread's share (a product's panels) — as MLAS blocks its sgemm: a block of
// kDepthBlock inputs of one panel (16 KiB) stays in L1 while every row tile of a pass runs over
// it, the blocks of kGroupPanels panels (128 KiB) and a pass's inputs for that block (144 × 256
// floats: 144 KiB) stay in L2, and the weights stream from memory once per pass (a 128-token
// text: one pass). Each output stays one multiply-add chain over its inputs in order: the tile
// parks its partial sums in y and resumes them on the next block, so every blocking gives the
// same bits. Measured on the 2-core AVX2 EPYC (BERT-base's four products at 128 rows, best of
// 10): the whole panel's inputs in one block and passes of 96 rows took 32.4 ms on one thread
// and 15.6 ms on two, these blocks 29.3 ms and 14.8 ms.
constexpr std::size_t kDepthBlock = 256;
constexpr std::size_t kGroupPanels = 8;
// Rows per pass: a multiple of every set's tile rows (6, 12).
constexpr std::size_t kPassRows = 144;
// Rows `in` apart whose stride is a multiple of 4 KiB fall in the same L1 sets (BERT's 3072-input
// FFN output: a tile's 12 rows in one set of 8 ways), and every broadcast then misses L1; such a
// pass's rows of a block of inputs are copied kBlockStride floats (17 cache lines) apart first.
// Measured on Zen 4 (avx512 f32, one thread, BERT-base's 3072 → 768 product, medians of 3
// alternating runs): 8.8 → 7.0 ms at 128 rows, 2.0 → 1.8 ms at 32. Other strides read in place:
// copied, their products gained nothing measurable.
constexpr std::size_t kBlockStride = kDepthBlock + 16;
constexpr bool rows_share_sets(std::size_t in) {
  return in % 1024 == 0;
}

// The portable tile: the same fused multiply-add chain per output as the AVX2 one.
void tile_portable(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
                   std::size_t width, const float* /*next*/,
                   std::size_t /*ahead: portable C++ has no prefetch*/) {
  for (std::size_t i = 0; i < tile_rows; ++i) {
    float acc[kPanel] = {};
    if (resume) std::copy_n(c + i * ldc, width, acc);
    const float* row = a + i * lda;
    for (std::size_t k = 0; k < depth; ++k)
      for (std::size_t j = 0; j < kPanel; ++j) acc[j] = std::fma(row[k], b[k * kPanel + j], acc[j]);
    for (std::size_t j = 0; j < width; ++j) c[i * ldc + j] = bias ? acc[j] + bias[j] : acc[j];
  }
}

detail::Kernel kernel_for(KernelSet set) {
  switch (set) {
    case KernelSet::portable:
      break;
    case KernelSet::avx2:
    case KernelSet::avx2_vnni:
      return detail::kernel_avx2();
    case KernelSet::avx512:
    case KernelSet::avx512_vnni:
    case KernelSet::avx512_bf16:
    case KernelSet::amx:  // AMX has no float32 product: the AVX-512 tile
      return detail::kernel_avx512();
  }
  return {tile_portable, 6};
}

}  // namespace

std::vector<float> pack_weights(std::span<const float> weight, std::size_t in, std::size_t out) {
  std::vector<float> packed(panels_of(out) * in * kPanel, 0.0f);
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t k = 0; k < in; ++k)
      packed[((o / kPanel) * in + k) * kPanel + o % kPanel] = weight[o * in + k];
  return packed;
}

void packed_product(KernelSet set, const float* packed, const float* bias, std::size_t in,
                    std::size_t out, std::size_t first_panel, std::size_t last_panel,
                    const float* x, std::size_t rows, float* y) {
  detail::packed_product_with(kernel_for(set), packed, bias, in, out, first_panel, last_panel, x,
                              rows, y);
}

void detail::packed_product_with(Kernel kernel, const float* packed, const float* bias,
                                 std::size_t in, std::size_t out, std::size_t first_panel,
                                 std::size_t last_panel, const float* x, std::size_t rows,
                                 float* y) {
  const bool copy = rows_share_sets(in);
  std::unique_ptr<float[]> block;  // only where rows are copied: no allocation per call otherwise
  if (copy)
    block = std::make_unique_for_overwrite<float[]>(std::min(rows, kPassRows) * kBlockStride);
  // The block that panels [p, p + count) of `group` run after inputs [k0, k0 + depth), in the
  // loop order below: rows read in place run a group's blocks of inputs in turn, then the next
  // group's; copied rows run every group over one block, then the next block. Nothing where the
  // next group lacks these panels. A model's weights do not fit in L3, so each block's first row
  // tile waited on memory; the tiles now fetch the next block into L2 as they go. Measured on
  // Zen 5 (BERT-base f32, 2 threads, medians of 10 alternating runs): 21.3 → 15.9 ms at 32
  // tokens, 60.4 → 56.2 ms at 128; ModernBERT-base 30.7 → 22.1 and 87.5 → 83.8 ms; the AVX2
  // tiles (forced) 43.7 → 32.3 and 107 → 102 ms for BERT.
  struct Ahead {
    const float* at = nullptr;
    std::size_t inputs = 0;
  };
  const auto ahead_of = [&](std::size_t group, std::size_t p, std::size_t count, std::size_t k0,
                            std::size_t depth) -> Ahead {
    const bool next_group = p + kGroupPanels + count <= last_panel;
    if (!copy) {
      if (k0 + depth < in)
        return {packed + (p * in + k0 + depth) * kPanel, std::min(depth, in - k0 - depth)};
      if (next_group) return {packed + (p + kGroupPanels) * in * kPanel, std::min(kDepthBlock, in)};
      return {};
    }
    if (next_group) return {packed + ((p + kGroupPanels) * in + k0) * kPanel, depth};
    const std::size_t first = first_panel + (p - group);
    if (k0 + depth < in && first + count <= last_panel)
      return {packed + (first * in + k0 + depth) * kPanel, std::min(depth, in - k0 - depth)};
    return {};
  };
  // One block of inputs [k0, k0 + kDepthBlock) of one group of panels, over a pass's rows.
  const auto run = [&](std::size_t pass, std::size_t pass_end, std::size_t group, std::size_t k0) {
    const std::size_t group_end = std::min(last_panel, group + kGroupPanels);
    const std::size_t depth = std::min(kDepthBlock, in - k0);
    const bool last = k0 + depth == in;
    // The group's biases on its last block, or zeros for a layer without (x + 0 is x: the same
    // bits as no addition).
    alignas(64) float group_bias[kGroupPanels * kPanel];
    const std::size_t group_col = group * kPanel;
    if (last) {
      std::fill_n(group_bias, kGroupPanels * kPanel, 0.0f);
      if (bias != nullptr)
        std::copy_n(bias + group_col, std::min(group_end * kPanel, out) - group_col, group_bias);
    }
    const std::size_t lda = copy ? kBlockStride : in;
    for (std::size_t r = pass; r < pass_end; r += kernel.rows) {
      const std::size_t tile_rows = std::min(kernel.rows, pass_end - r);
      const float* a = copy ? block.get() + (r - pass) * kBlockStride : x + r * in + k0;
      for (std::size_t p = group; p < group_end; ++p) {
        const std::size_t col = p * kPanel;
        const float* panel_bias = last ? group_bias + (col - group_col) : nullptr;
        const std::size_t tile_panels = kernel.wide != nullptr && p + 1 < group_end ? 2 : 1;
        // The first row tile brings into L2 the block these panels need next (the other row
        // tiles find the current one there).
        const Ahead next = r == pass ? ahead_of(group, p, tile_panels, k0, depth) : Ahead{};
        if (tile_panels == 2) {
          kernel.wide(a, lda, tile_rows, packed + (p * in + k0) * kPanel, in * kPanel, depth,
                      k0 != 0, panel_bias, y + r * out + col, out,
                      std::min(kPanel, out - col - kPanel), next.at, next.inputs);
          ++p;
          continue;
        }
        kernel.tile(a, lda, tile_rows, packed + (p * in + k0) * kPanel, depth, k0 != 0, panel_bias,
                    y + r * out + col, out, std::min(kPanel, out - col), next.at, next.inputs);
      }
    }
  };
  for (std::size_t pass = 0; pass < rows; pass += kPassRows) {
    const std::size_t pass_end = std::min(rows, pass + kPassRows);
    if (copy) {
      // Copied rows: each block of inputs once per pass, then every group over it (copied per
      // group, BERT's FFN output copied its rows 3 times per pass on each of 2 threads:
      // packed_product_with was 1.7% of a 128-token pass).
      for (std::size_t k0 = 0; k0 < in; k0 += kDepthBlock) {
        const std::size_t depth = std::min(kDepthBlock, in - k0);
        for (std::size_t r = pass; r < pass_end; ++r)
          std::copy_n(x + r * in + k0, depth, block.get() + (r - pass) * kBlockStride);
        for (std::size_t group = first_panel; group < last_panel; group += kGroupPanels)
          run(pass, pass_end, group, k0);
      }
      continue;
    }
    for (std::size_t group = first_panel; group < last_panel; group += kGroupPanels)
      for (std::size_t k0 = 0; k0 < in; k0 += kDepthBlock) run(pass, pass_end, group, k0);
  }
}

}  // namespace mcpclass::kernels
