#include "architectures/modernbert/modernbert_model.hpp"

#include "architectures/common/dense_weights.hpp"

#include <algorithm>

namespace mcpclass::architectures {

ModernBertModel::ModernBertModel(const std::string& dir, const std::string& adapter_dir,
                                 const checkpoint::CheckpointProgress& progress,
                                 const kernels::Compute& compute)
    : ModernBertModel(read_modernbert_checkpoint(dir, BertHead::sequence, adapter_dir, progress),
                      compute) {}

ModernBertModel::ModernBertModel(ModernBertCheckpoint checkpoint, const kernels::Compute& compute)
    : ModernBertModel(
          checkpoint.config,
          std::make_shared<const ModernBertEncoder>(checkpoint.config, checkpoint.tensors, compute),
          {}, checkpoint.tensors, compute) {}

// The prediction head and the classifier stay in float32 (under 1% of the products).
ModernBertModel::ModernBertModel(ModernBertConfig config,
                                 std::shared_ptr<const ModernBertEncoder> encoder,
                                 EncoderDeltas deltas, checkpoint::CheckpointTensors& head,
                                 const kernels::Compute& compute)
    : config_(std::move(config)),
      encoder_(std::move(encoder)),
      deltas_(std::move(deltas)),
      head_(take_prediction_head(head, compute.in_float(), config_)),
      classifier_(take_dense(head, compute.in_float(), "classifier", config_.hidden,
                             config_.labels.size())) {
  require_every_tensor_taken(head, config_);
}

std::size_t ModernBertModel::parameters() const {
  std::size_t n = encoder_->parameters() + head_.parameters() + classifier_.parameters();
  for (const auto& layer : deltas_) n += layer.parameters();
  return n;
}

std::vector<float> ModernBertModel::logits(std::span<const BertInput> inputs,
                                           std::size_t threads) const {
  const auto states = hidden_states(inputs, threads);
  const std::size_t w = config_.hidden;
  // Each text's pooled row at the start of its own block, as it would be alone.
  const std::size_t blocks = inputs.size() * kernels::kRowBlock;
  std::vector<float> pooled(blocks * w, 0.0f), head(blocks * classifier_.out);
  for (std::size_t b = 0; b < inputs.size(); ++b) {
    float* row = pooled.data() + b * kernels::kRowBlock * w;
    const auto text = states.text(b);
    const std::size_t n = states.tokens[b];
    if (!config_.mean_pooling) {
      std::copy_n(text.data(), w, row);
      continue;
    }
    for (std::size_t j = 0; j < w; ++j) {
      double sum = 0.0;
      for (std::size_t t = 0; t < n; ++t) sum += text[t * w + j];
      row[j] = static_cast<float>(sum / static_cast<double>(n));
    }
  }
  head_.apply(pooled, blocks);
  kernels::linear(classifier_, pooled.data(), blocks, head.data());
  std::vector<float> out(inputs.size() * classifier_.out);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    std::copy_n(head.data() + b * kernels::kRowBlock * classifier_.out, classifier_.out,
                out.data() + b * classifier_.out);
  return out;
}

}  // namespace mcpclass::architectures
