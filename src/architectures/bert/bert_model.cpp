#include "architectures/bert/bert_model.hpp"

#include "architectures/common/dense_weights.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::architectures {

BertSequenceModel::BertSequenceModel(const std::string& dir, const std::string& adapter_dir,
                                     const checkpoint::CheckpointProgress& progress,
                                     const kernels::Compute& compute)
    : BertSequenceModel(read_bert_checkpoint(dir, BertHead::sequence, adapter_dir, progress),
                        compute) {}

BertSequenceModel::BertSequenceModel(BertCheckpoint checkpoint, const kernels::Compute& compute)
    : BertSequenceModel(
          checkpoint.config,
          std::make_shared<const BertEncoder>(checkpoint.config, checkpoint.tensors, compute), {},
          checkpoint.tensors, compute) {}

BertSequenceModel::BertSequenceModel(BertConfig config, std::shared_ptr<const BertEncoder> encoder,
                                     EncoderDeltas deltas, checkpoint::CheckpointTensors& file,
                                     const kernels::Compute& compute)
    : config_(std::move(config)), encoder_(std::move(encoder)), deltas_(std::move(deltas)) {
  // The pooler and the classifier stay in float32 (1.4% of BERT-base's products).
  const auto head = compute.in_float();
  const auto& c = config_;
  const auto labels = c.labels.size();
  if (c.family == BertFamily::bert) {
    pooler_ = take_dense(file, head, c.prefix + ".pooler.dense", c.hidden, c.hidden);
    head_ = take_dense(file, head, "classifier", c.hidden, labels);
  } else {
    pooler_ = take_dense(file, head, "classifier.dense", c.hidden, c.hidden);
    head_ = take_dense(file, head, "classifier.out_proj", c.hidden, labels);
  }
}

std::size_t BertSequenceModel::parameters() const {
  std::size_t n = encoder_->parameters() + pooler_.parameters() + head_.parameters();
  for (const auto& layer : deltas_) n += layer.parameters();
  return n;
}

std::vector<float> BertSequenceModel::logits(std::span<const BertInput> inputs,
                                             std::size_t threads) const {
  const auto hidden =
      encoder_->hidden_states(inputs, threads, deltas_.empty() ? nullptr : &deltas_);
  const std::size_t w = hidden.width;
  // The first token of each text ([CLS] / <s>) through the pooler, tanh, then the head; each
  // at the start of its own block, as it would be alone.
  const std::size_t blocks = inputs.size() * kernels::kRowBlock;
  std::vector<float> first(blocks * w, 0.0f), pooled(blocks * w), head(blocks * head_.out);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    std::copy_n(hidden.text(b).data(), w, first.data() + b * kernels::kRowBlock * w);
  kernels::linear(pooler_, first.data(), blocks, pooled.data());
  for (auto& v : pooled) v = std::tanh(v);
  kernels::linear(head_, pooled.data(), blocks, head.data());
  std::vector<float> out(inputs.size() * head_.out);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    std::copy_n(head.data() + b * kernels::kRowBlock * head_.out, head_.out,
                out.data() + b * head_.out);
  return out;
}

}  // namespace mcpclass::architectures
