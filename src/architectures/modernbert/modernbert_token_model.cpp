#include "architectures/modernbert/modernbert_token_model.hpp"

#include "architectures/common/dense_weights.hpp"

namespace mcpclass::architectures {

ModernBertTokenModel::ModernBertTokenModel(const std::string& dir, const std::string& adapter_dir,
                                           const checkpoint::CheckpointProgress& progress,
                                           const kernels::Compute& compute)
    : ModernBertTokenModel(read_modernbert_checkpoint(dir, BertHead::token, adapter_dir, progress),
                           compute) {}

ModernBertTokenModel::ModernBertTokenModel(ModernBertCheckpoint checkpoint,
                                           const kernels::Compute& compute)
    : config_(std::move(checkpoint.config)),
      encoder_(config_, checkpoint.tensors, compute),
      head_(take_dense(checkpoint.tensors, compute.in_float(), "classifier", config_.hidden,
                       config_.labels.size()),
            take_prediction_head(checkpoint.tensors, compute.in_float(), config_)) {
  require_every_tensor_taken(checkpoint.tensors, config_);
}

}  // namespace mcpclass::architectures
