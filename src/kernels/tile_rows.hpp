// Internal: the one dispatch from a run-time row count to a tile compiled for that count, which
// every kernel file's tiles share (their accumulators are named registers, so the count is a
// template argument).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace mcpclass::kernels::detail {

/// Calls tile(std::integral_constant<std::size_t, rows>{}) for rows in [1, kMax] (a larger
/// count runs kMax, a smaller one 1).
template <std::size_t kMax, class Tile>
void with_tile_rows(std::size_t rows, Tile&& tile) {
  rows = rows < 1 ? 1 : rows > kMax ? kMax : rows;
  [&]<std::size_t... kI>(std::index_sequence<kI...>) {
    (void)((rows == kI + 1 ? (tile(std::integral_constant<std::size_t, kI + 1>{}), true) : false) ||
           ...);
  }
  (std::make_index_sequence<kMax>{});
}

}  // namespace mcpclass::kernels::detail
