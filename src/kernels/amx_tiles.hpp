// Internal: the one AMX tile program of the amx set's int8 and bf16 products (qgemm_amx.cpp,
// bf16gemm_amx.cpp). Eight tiles of 16 rows × 64 bytes: four of sums (two 16-row blocks of the
// activations by two 16-output panels), two of activations, two of weights. The packed panels of
// qgemm.hpp and bf16gemm.hpp already are the tiles' B operand (64 bytes per group of inputs: 4
// int8 or 2 bfloat16 values of each of 16 outputs), and rows and panels are padded to whole tiles
// (kQDepthStep, kBDepthStep), so the tiles keep one shape and the configuration is loaded once
// per call. A tile's sums for a row depend on that row alone: a text's result does not change
// with the rows around it.
#pragma once

#include "kernels/isa.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

/// Rows of one tile, bytes of one tile row.
inline constexpr std::size_t kTileRows = 16, kTileBytes = 64;

/// The 64-byte operand of ldtilecfg (palette 1).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

/// 16 × 16 sums of 32 bits (int32 or float32) of one row block by one panel, 64 bytes a row.
struct alignas(64) TileSums {
  std::uint32_t v[kTileRows * 16];
};

/// How the tiles of one product are laid out: `a` the activations (`rows` rows of `row_bytes`,
/// a multiple of kTileBytes), `b` the packed panels (`panel_bytes` each; the bytes of a panel
/// that meet input byte k of a row start at k · 16).
struct TileOperands {
  const unsigned char* a;
  std::size_t rows, row_bytes;
  const unsigned char* b;
  std::size_t panel_bytes;
};

/// The tile product of a product's values: int8 (tdpbssd, signed by signed bytes into int32) or
/// bfloat16 (tdpbf16ps, pairs into float32).
enum class TileDot { int8, bf16 };

// C += A · B, the tiles named by number (the intrinsics paste them into the instruction).
#define MCPCLASS_TILE_DOT(c, a, b)       \
  if constexpr (kDot == TileDot::int8) { \
    _tile_dpbssd(c, a, b);               \
  } else {                               \
    _tile_dpbf16ps(c, a, b);             \
  }

// The sums of up to two row blocks by up to two panels over the whole depth.
template <TileDot kDot, bool kTwoBlocks, bool kTwoPanels>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,amx-tile,amx-int8,amx-bf16")
void tile_block(const unsigned char* a0, const unsigned char* a1, std::size_t a_stride,
                const unsigned char* b0, const unsigned char* b1, std::size_t depth_bytes,
                TileSums* sums) {
  _tile_zero(0);
  if constexpr (kTwoPanels) _tile_zero(1);
  if constexpr (kTwoBlocks) _tile_zero(2);
  if constexpr (kTwoBlocks && kTwoPanels) _tile_zero(3);
  for (std::size_t k = 0; k < depth_bytes; k += kTileBytes) {
    _tile_loadd(4, a0 + k, static_cast<long>(a_stride));
    _tile_loadd(6, b0 + k * 16, static_cast<long>(kTileBytes));
    MCPCLASS_TILE_DOT(0, 4, 6)
    if constexpr (kTwoPanels) {
      _tile_loadd(7, b1 + k * 16, static_cast<long>(kTileBytes));
      MCPCLASS_TILE_DOT(1, 4, 7)
    }
    if constexpr (kTwoBlocks) {
      _tile_loadd(5, a1 + k, static_cast<long>(a_stride));
      MCPCLASS_TILE_DOT(2, 5, 6)
      if constexpr (kTwoPanels) {
        MCPCLASS_TILE_DOT(3, 5, 7)
      }
    }
  }
  _tile_stored(0, sums[0].v, static_cast<long>(kTileBytes));
  if constexpr (kTwoPanels) _tile_stored(1, sums[1].v, static_cast<long>(kTileBytes));
  if constexpr (kTwoBlocks) _tile_stored(2, sums[2].v, static_cast<long>(kTileBytes));
  if constexpr (kTwoBlocks && kTwoPanels) _tile_stored(3, sums[3].v, static_cast<long>(kTileBytes));
}
#undef MCPCLASS_TILE_DOT

/// For panels [first_panel, last_panel) and every row of `op`, the sums of each 16-row block by
/// each panel, handed to `store(first_row, rows, panel, const TileSums&)` (rows ≤ 16 of them
/// valid). A last block of fewer than 16 rows is read from a zero-padded copy (the tiles read
/// 16). Passes of kPassRows rows keep a pass's activations in L2 while the panels stream once.
template <TileDot kDot, class Store>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,amx-tile,amx-int8,amx-bf16")
void tile_product(const TileOperands& op, std::size_t first_panel, std::size_t last_panel,
                  Store&& store) {
  if (first_panel >= last_panel || op.rows == 0) return;
  constexpr std::size_t kPassRows = 128;
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = kTileBytes;
    config.rows[t] = kTileRows;
  }
  _tile_loadconfig(&config);
  std::vector<unsigned char> padded;
  const std::size_t full = op.rows / kTileRows * kTileRows;
  if (full < op.rows) {
    padded.assign(kTileRows * op.row_bytes, 0);
    std::memcpy(padded.data(), op.a + full * op.row_bytes, (op.rows - full) * op.row_bytes);
  }
  const auto block = [&](std::size_t r) {
    return r < full ? op.a + r * op.row_bytes : padded.data();
  };
  TileSums sums[4];
  for (std::size_t pass = 0; pass < op.rows; pass += kPassRows) {
    const std::size_t pass_end = std::min(op.rows, pass + kPassRows);
    for (std::size_t p = first_panel; p < last_panel; p += 2) {
      const bool two_panels = p + 1 < last_panel;
      const unsigned char* b0 = op.b + p * op.panel_bytes;
      const unsigned char* b1 = b0 + op.panel_bytes;
      for (std::size_t r = pass; r < pass_end; r += 2 * kTileRows) {
        const bool two_blocks = r + kTileRows < pass_end;
        const unsigned char *a0 = block(r), *a1 = two_blocks ? block(r + kTileRows) : nullptr;
        if (two_blocks && two_panels)
          tile_block<kDot, true, true>(a0, a1, op.row_bytes, b0, b1, op.row_bytes, sums);
        else if (two_blocks)
          tile_block<kDot, true, false>(a0, a1, op.row_bytes, b0, b1, op.row_bytes, sums);
        else if (two_panels)
          tile_block<kDot, false, true>(a0, a1, op.row_bytes, b0, b1, op.row_bytes, sums);
        else
          tile_block<kDot, false, false>(a0, a1, op.row_bytes, b0, b1, op.row_bytes, sums);
        for (std::size_t i = 0; i < (two_blocks ? 2u : 1u); ++i) {
          const std::size_t first = r + i * kTileRows,
                            count = std::min(kTileRows, pass_end - first);
          store(first, count, p, sums[2 * i]);
          if (two_panels) store(first, count, p + 1, sums[2 * i + 1]);
        }
      }
    }
  }
  _tile_release();
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail
