// Internal: a LoRA update kept apart from the linear layer it adapts, y = W x + s · B (A x), so
// that one packed base layer serves several adapters (one base, many tasks) instead of one merged
// copy of the weights per adapter. A and B are small (r × in, width × r) and stay in float32
// whatever the base's precision, as PEFT computes them beside a quantized base.
// Thread-safety: immutable values; linear_adapted() is pure.
#pragma once

#include "kernels/activate.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <optional>
#include <span>

namespace mcpclass::kernels {

/// One adapted module's low-rank update of a linear layer's outputs [offset, offset + width): a
/// layer of stacked modules (BERT's query, key and value) takes one per adapted module.
struct LowRank {
  Dense down;              ///< lora_A: in → r
  Dense up;                ///< lora_B: r → width
  std::size_t offset = 0;  ///< The first of the layer's outputs it adds to.
  float scale = 1.0f;      ///< lora_alpha / r (or / √r with use_rslora)

  std::size_t parameters() const { return down.parameters() + up.parameters(); }
};

/// `a` (r × in) and `b` (width × r), as PEFT stores lora_A.weight and lora_B.weight, packed in
/// float32 for `set`. Throws std::invalid_argument for shapes that do not fit.
LowRank make_low_rank(std::span<const float> a, std::span<const float> b, std::size_t in,
                      std::size_t r, std::size_t width, std::size_t offset, double scale,
                      KernelSet set);

/// linear() of `d` plus each update of `deltas` (each within d.out), then `activation` over the
/// sum, as PEFT's LoRA Linear adds B(A x)·scaling to the base layer's output before the module
/// that follows it activates; without deltas, exactly linear(d, x, rows, y, activation).
/// `rows` padded as linear() takes them.
void linear_adapted(const Dense& d, std::span<const LowRank> deltas, const float* x,
                    std::size_t rows, float* y,
                    std::optional<HiddenActivation> activation = std::nullopt);

}  // namespace mcpclass::kernels
