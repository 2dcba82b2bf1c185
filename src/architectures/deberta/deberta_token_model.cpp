#include "architectures/deberta/deberta_token_model.hpp"

#include "architectures/common/dense_weights.hpp"

namespace mcpclass::architectures {

DebertaTokenModel::DebertaTokenModel(const std::string& dir, const std::string& adapter_dir,
                                     const checkpoint::CheckpointProgress& progress,
                                     const kernels::Compute& compute)
    : DebertaTokenModel(read_deberta_checkpoint(dir, BertHead::token, adapter_dir, progress),
                        compute) {}

DebertaTokenModel::DebertaTokenModel(DebertaCheckpoint checkpoint, const kernels::Compute& compute)
    : config_(std::move(checkpoint.config)),
      encoder_(config_, checkpoint.tensors, compute),
      head_(take_dense(checkpoint.tensors, compute.in_float(), "classifier", config_.hidden,
                       config_.labels.size())) {}

}  // namespace mcpclass::architectures
