// Internal: LoRA adapters as PEFT saves them (save_pretrained of a LoRA PeftModel): a directory
// with `adapter_config.json` (peft_type LORA, r, lora_alpha, use_rslora, target_modules,
// modules_to_save, bias, ...) and `adapter_model.safetensors`, whose tensors are named
// `base_model.model.<module>.lora_A.weight` / `.lora_B.weight` (the adapter name stripped),
// `base_model.model.<module>.lora_embedding_A` / `_B` for embeddings, and full tensors for
// `modules_to_save` and, with bias "all" / "lora_only", the biases trained with them.
//
// The adapter is merged into the base checkpoint's tensors by name before any architecture reads
// them (W += scaling · B·A, scaling = lora_alpha / r, or / √r with use_rslora; for an embedding
// the product is transposed, as PEFT's Embedding layer stores A and B), so it applies to every
// model that loads its weights through checkpoint_files.hpp.
#pragma once

#include "checkpoint/checkpoint_files.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::checkpoint {

/// One adapted module's factors, as PEFT stores them.
struct LoraUpdate {
  std::string module;  ///< The base module, e.g. bert.encoder.layer.0.attention.self.query
  SafeTensor a;        ///< lora_A: r × in (an embedding's: r × num)
  SafeTensor b;        ///< lora_B: out × r (an embedding's: dim × r)
  bool embedding = false;
};

/// An adapter read and checked against its base, not merged: what several adapters over one
/// base keep beside it.
struct LoraAdapter {
  std::string file;      ///< Its adapter_model.safetensors, for messages.
  double scaling = 0.0;  ///< lora_alpha / r, or / √r with use_rslora.
  std::vector<LoraUpdate> updates;
  /// Tensors saved whole (modules_to_save, trained biases), by the base's name.
  std::vector<std::pair<std::string, SafeTensor>> replaced;
};

/// Reads `adapter_dir` and checks it against `base`, throwing as merge_lora_adapter() does.
LoraAdapter read_lora_adapter(const std::string& adapter_dir, const CheckpointTensors& base,
                              const std::function<void(std::uint64_t)>& on_tensor = {});

/// Merges a read adapter into `base` (its tensors then attributed to the adapter file).
void merge_lora_adapter(LoraAdapter adapter, CheckpointTensors& base);

/// Reads `adapter_dir` and merges it into `base` in place (merged or replaced tensors are then
/// attributed to the adapter file in `base.file_of`). Throws ClassifyError naming the file and
/// the key or tensor for: a missing or malformed file, a peft_type other than LORA, an option
/// mcpclass does not implement (use_dora, lora_bias, fan_in_fan_out, rank_pattern,
/// alpha_pattern, trainable_token_indices, layer_replication), a LoRA tensor whose module is
/// not in target_modules or that names no base tensor, a rank other than `r`, a shape that does
/// not fit the base tensor, a lora_A without its lora_B (or the reverse), a full tensor that is
/// neither in modules_to_save nor a trained bias, and non-finite values.
/// `on_tensor` as read_safetensors takes it, for the adapter file.
void merge_lora_adapter(const std::string& adapter_dir, CheckpointTensors& base,
                        const std::function<void(std::uint64_t)>& on_tensor = {});

}  // namespace mcpclass::checkpoint
