// Internal: the one dispatch from a run-time row count to a tile compiled for that count, which
// every kernel file's tiles share (their accumulators are named registers, so the count is a
// template argument), and from whether a tile fetches its caller's next block to a tile compiled
// with or without that fetch (so that the tiles without keep no test in their inner loop).
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

/// Calls tile(std::true_type{}) when `fetch`, else tile(std::false_type{}).
template <class Tile>
void with_fetch(bool fetch, Tile&& tile) {
  if (fetch)
    tile(std::true_type{});
  else
    tile(std::false_type{});
}

}  // namespace mcpclass::kernels::detail
