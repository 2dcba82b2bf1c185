#include "architectures/bert/bert_token_model.hpp"

#include "architectures/common/dense_weights.hpp"

namespace mcpclass::architectures {

BertTokenModel::BertTokenModel(const std::string& dir, const std::string& adapter_dir,
                               const checkpoint::CheckpointProgress& progress)
    : BertTokenModel(read_bert_checkpoint(dir, BertHead::token, adapter_dir, progress)) {}

// BertForTokenClassification and RobertaForTokenClassification both name their head
// `classifier` (hidden_size → num_labels).
BertTokenModel::BertTokenModel(BertCheckpoint checkpoint)
    : config_(std::move(checkpoint.config)),
      encoder_(config_, checkpoint.tensors),
      head_(take_dense(checkpoint.tensors, "classifier", config_.hidden, config_.labels.size())) {}

}  // namespace mcpclass::architectures
