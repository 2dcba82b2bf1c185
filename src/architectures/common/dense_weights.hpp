// Internal: the dense layers and norms of the native encoders (kernels/dense_rows.hpp) taken out
// of a checkpoint's tensors.
#pragma once

#include "checkpoint/checkpoint_files.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// `name.weight` (out × in) and, if `bias`, `name.bias` (out) taken out of `file`
/// (CheckpointTensors::take: a missing, misshapen or non-finite tensor is an error naming it),
/// the weights packed as `compute` asks (kernels::make_dense; the checkpoint's float copy is
/// dropped as each is packed).
kernels::Dense take_dense(checkpoint::CheckpointTensors& file, const kernels::Compute& compute,
                          const std::string& name, std::size_t in, std::size_t out,
                          bool bias = true);

/// The Linear layers `names` (each in → out, with biases) as one of in → names.size() · out:
/// their outputs side by side, in the order of `names` (BERT's query, key and value).
kernels::Dense take_stacked_dense(checkpoint::CheckpointTensors& file,
                                  const kernels::Compute& compute,
                                  const std::vector<std::string>& names, std::size_t in,
                                  std::size_t out);

/// Linear layers of in → outs[i] each (`names[i]`, with biases when `bias`) as one of
/// in → Σ outs: their outputs side by side in the order of `names` (a grouped-query attention's
/// queries, keys and values; a gated MLP's gate and up projections).
kernels::Dense take_concatenated_dense(checkpoint::CheckpointTensors& file,
                                       const kernels::Compute& compute,
                                       const std::vector<std::string>& names,
                                       const std::vector<std::size_t>& outs, std::size_t in,
                                       bool bias);

/// `name.weight` and, if `bias`, `name.bias`, each `width` values, taken out of `file`.
kernels::Norm take_norm(checkpoint::CheckpointTensors& file, const std::string& name,
                        std::size_t width, bool bias);

/// Throws ClassifyError naming the first tensor of `file` that no part of the model took (take()
/// leaves a taken tensor's values empty): a bias the config says the model lacks, or a tensor of
/// another architecture, would otherwise be silently ignored and the answers quietly wrong.
/// The message names `architecture`, `config_file` and the config keys to check (`keys`).
void require_every_tensor_taken(const checkpoint::CheckpointTensors& file,
                                const std::string& architecture, const std::string& config_file,
                                const std::string& keys);

}  // namespace mcpclass::architectures
