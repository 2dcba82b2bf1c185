// Internal: the weights of a Hugging Face checkpoint directory as published, one
// `model.safetensors` or shards listed by `model.safetensors.index.json` (its `weight_map` names
// the shard of every tensor), with each tensor's file kept for error messages.
#pragma once

#include "checkpoint/safetensors.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mcpclass::checkpoint {

/// A size as an entry of the shape take() expects.
constexpr std::int64_t shape_dim(std::size_t v) {
  return static_cast<std::int64_t>(v);
}

/// (bytes of tensor data read and converted, bytes in all the files being read).
using CheckpointProgress = std::function<void(std::size_t, std::size_t)>;

struct CheckpointTensors {
  SafeTensors tensors;
  std::map<std::string, std::string> file_of;  ///< Tensor name → the file that holds it.
  std::string description;                     ///< The file (or index) read, for messages.

  /// The named tensor with exactly this shape, all values finite; throws ClassifyError naming
  /// the tensor and its file otherwise (a NaN weight would turn every answer into NaN).
  const SafeTensor& require(const std::string& name, const std::vector<std::int64_t>& shape) const;
  /// require(), then moves the values out (each weight is held once while a model loads).
  std::vector<float> take(const std::string& name, const std::vector<std::int64_t>& shape);
};

/// Reads `dir/model.safetensors`, else the shards of `dir/model.safetensors.index.json`, then
/// merges the LoRA adapter of `adapter_dir` into them when it is not empty (lora_adapter.hpp).
/// Throws ClassifyError naming the file for a missing, truncated or malformed file, an index
/// that names a shard outside `dir`, a tensor a shard lacks, or an adapter that does not fit.
/// `progress` is called after every tensor read (the totals are the files' sizes, so it ends a
/// little short of them: headers are not counted).
CheckpointTensors read_checkpoint_tensors(const std::string& dir,
                                          const std::string& adapter_dir = {},
                                          const CheckpointProgress& progress = {});

}  // namespace mcpclass::checkpoint
