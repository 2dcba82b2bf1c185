// Internal: one task's LoRA updates of a shared encoder, kept apart from its weights
// (kernels/low_rank.hpp), so that several adapters run over one packed base: each encoder layer
// has four linear products (attention's input projection — queries, keys and values stacked —,
// its output, the feed-forward's two), and each takes the updates of the modules it holds.
// Thread-safety: plain values.
#pragma once

#include "kernels/low_rank.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace mcpclass::architectures {

/// The four linear products of an encoder layer, in the order they run.
enum LinearSlot : std::size_t {
  kAttentionIn = 0,
  kAttentionOut = 1,
  kFeedForwardIn = 2,
  kFeedForwardOut = 3
};

/// One layer's updates, by slot.
struct LayerDeltas {
  std::array<std::vector<kernels::LowRank>, 4> linear;
  /// DeBERTa with share_att_key: the relative embeddings through the task's adapted query and
  /// key projections (deberta_encoder.hpp), which the base projects once at load; empty when
  /// the task leaves both as the base has them.
  std::vector<float> pos_key, pos_query;

  std::size_t parameters() const {
    std::size_t n = pos_key.size() + pos_query.size();
    for (const auto& slot : linear)
      for (const auto& d : slot) n += d.parameters();
    return n;
  }
};

/// A task's updates, one entry a layer (fewer entries: the later layers have none).
using EncoderDeltas = std::vector<LayerDeltas>;

/// Where one adapted module's update goes: its layer, slot, and the outputs it adds to.
struct ModuleSlot {
  std::size_t layer = 0;
  LinearSlot slot = kAttentionIn;
  std::size_t offset = 0;  ///< Its first output in the slot's product (BERT's key: hidden).
  std::size_t in = 0, width = 0;
};

/// The updates of `slot` in `layer` (none: empty).
inline std::span<const kernels::LowRank> deltas_of(const EncoderDeltas* deltas, std::size_t layer,
                                                   LinearSlot slot) {
  if (deltas == nullptr || layer >= deltas->size()) return {};
  return (*deltas)[layer].linear[slot];
}

}  // namespace mcpclass::architectures
