#include "architectures/deberta/deberta_model.hpp"

#include "architectures/common/dense_weights.hpp"

#include <algorithm>

namespace mcpclass::architectures {

DebertaModel::DebertaModel(const std::string& dir, const std::string& adapter_dir,
                           const checkpoint::CheckpointProgress& progress,
                           const kernels::Compute& compute)
    : DebertaModel(read_deberta_checkpoint(dir, BertHead::sequence, adapter_dir, progress),
                   compute) {}

DebertaModel::DebertaModel(DebertaCheckpoint checkpoint, const kernels::Compute& compute)
    : DebertaModel(
          checkpoint.config,
          std::make_shared<const DebertaEncoder>(checkpoint.config, checkpoint.tensors, compute),
          {}, checkpoint.tensors, compute) {}

// The pooler and the classifier stay in float32 (one row a text).
DebertaModel::DebertaModel(DebertaConfig config, std::shared_ptr<const DebertaEncoder> encoder,
                           EncoderDeltas deltas, checkpoint::CheckpointTensors& head,
                           const kernels::Compute& compute)
    : config_(std::move(config)),
      encoder_(std::move(encoder)),
      deltas_(std::move(deltas)),
      pooler_(take_dense(head, compute.in_float(), "pooler.dense", config_.hidden, config_.hidden)),
      classifier_(take_dense(head, compute.in_float(), "classifier", config_.hidden,
                             config_.labels.size())) {}

std::size_t DebertaModel::parameters() const {
  std::size_t n = encoder_->parameters() + pooler_.parameters() + classifier_.parameters();
  for (const auto& layer : deltas_) n += layer.parameters();
  return n;
}

std::vector<float> DebertaModel::logits(std::span<const BertInput> inputs,
                                        std::size_t threads) const {
  const auto states =
      encoder_->hidden_states(inputs, threads, deltas_.empty() ? nullptr : &deltas_);
  const std::size_t w = config_.hidden, labels = classifier_.out;
  // Each text's first token at the start of its own block, as it would be alone.
  const std::size_t blocks = inputs.size() * kernels::kRowBlock;
  std::vector<float> first(blocks * w, 0.0f), pooled(blocks * w), head(blocks * labels);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    std::copy_n(states.text(b).data(), w, first.data() + b * kernels::kRowBlock * w);
  kernels::linear(pooler_, first.data(), blocks, pooled.data(), config_.pooler_activation);
  kernels::linear(classifier_, pooled.data(), blocks, head.data());
  std::vector<float> out(inputs.size() * labels);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    std::copy_n(head.data() + b * kernels::kRowBlock * labels, labels, out.data() + b * labels);
  return out;
}

}  // namespace mcpclass::architectures
