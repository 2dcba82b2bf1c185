#include "kernels/softmax.hpp"

#include <algorithm>

namespace mcpclass::kernels {

namespace {

using namespace detail;

// The row in 8 lanes as the AVX2 code keeps them: lane l sums values l, l + 8, …; the tail
// (count % 8 values) is added to lane 0 … in turn after; the lanes are summed pairwise
// (l + 4, then + 2, then + 1) as the horizontal add does.
void softmax_portable(float* row, std::size_t count) {
  float mx = row[0];
  for (std::size_t j = 1; j < count; ++j) mx = std::max(mx, row[j]);
  float lanes[8] = {};
  std::size_t j = 0;
  for (; j + 8 <= count; j += 8)
    for (std::size_t l = 0; l < 8; ++l) lanes[l] += (row[j + l] = exp_lane(row[j + l] - mx));
  for (std::size_t l = 0; j < count; ++j, ++l) lanes[l] += (row[j] = exp_lane(row[j] - mx));
  for (std::size_t l = 0; l < 4; ++l) lanes[l] += lanes[l + 4];
  for (std::size_t l = 0; l < 2; ++l) lanes[l] += lanes[l + 2];
  const float inv = 1.0f / (lanes[0] + lanes[1]);
  for (j = 0; j < count; ++j) row[j] *= inv;
}

}  // namespace

void softmax_row(KernelSet set, float* row, std::size_t n, std::size_t lo, std::size_t hi) {
  const auto run = set == KernelSet::portable ? softmax_portable : softmax_row_avx2();
  if (hi > lo) run(row + lo, hi - lo);
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi, row + n, 0.0f);
}

}  // namespace mcpclass::kernels
