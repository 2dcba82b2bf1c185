#include "architectures/common/sequence_model.hpp"

#include "architectures/bert/bert_model.hpp"
#include "architectures/deberta/deberta_model.hpp"
#include "architectures/modernbert/modernbert_model.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "kernels/dense_rows.hpp"

#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

json::object describe_model(const BertSequenceModel& model) {
  const auto& c = model.config();
  return describe_bert(c, model.parameters(),
                       std::string("the first token through ") +
                           (c.family == BertFamily::bert ? "the pooler" : "classifier.dense") +
                           " and tanh, then " + std::to_string(c.labels.size()) +
                           " logits and softmax");
}

json::object describe_model(const ModernBertModel& model) {
  const auto& c = model.config();
  auto out = describe_modernbert(
      c, model.parameters(),
      std::string(c.mean_pooling ? "the mean of all tokens" : "the first token") +
          " through head.dense, " + activation_description(c.classifier_activation) +
          " and head.norm, then " + std::to_string(c.labels.size()) + " logits and softmax");
  out["classifier_pooling"] = c.mean_pooling ? "mean" : "cls";
  return out;
}

json::object describe_model(const DebertaModel& model) {
  const auto& c = model.config();
  return describe_deberta(c, model.parameters(),
                          std::string("the first token through pooler.dense and ") +
                              activation_description(c.pooler_activation) + ", then " +
                              std::to_string(c.labels.size()) + " logits and softmax");
}

// Any native sequence model behind SequenceModel.
template <class Model>
class Adapted final : public NativeCheckpointModel<Model, SequenceModel> {
 public:
  using NativeCheckpointModel<Model, SequenceModel>::NativeCheckpointModel;

  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const override {
    return this->model_.logits(inputs, threads);
  }
  json::object describe() const override { return describe_model(this->model_); }
};

}  // namespace

std::size_t sequence_rows(std::size_t tokens) {
  return kernels::padded_rows(tokens);
}

std::unique_ptr<SequenceModel> open_sequence_model(const std::string& dir,
                                                   const std::string& adapter_dir,
                                                   const checkpoint::CheckpointProgress& progress,
                                                   const kernels::Compute& compute) {
  const auto config = checkpoint::read_checkpoint_config(dir);
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto architecture = checkpoint::config_architecture(config, file);
  if (architecture == "ModernBertForSequenceClassification")
    return std::make_unique<Adapted<ModernBertModel>>(dir, adapter_dir, progress, compute);
  if (architecture == "DebertaV2ForSequenceClassification")
    return std::make_unique<Adapted<DebertaModel>>(dir, adapter_dir, progress, compute);
  if (architecture == "BertForSequenceClassification" ||
      architecture == "RobertaForSequenceClassification" ||
      architecture == "XLMRobertaForSequenceClassification")
    return std::make_unique<Adapted<BertSequenceModel>>(dir, adapter_dir, progress, compute);
  checkpoint::config_error(
      file, "architecture '" + architecture + "' " +
                (architecture.ends_with("ForTokenClassification")
                     ? "is a token classifier; this needs a sequence classifier"
                     : "is not supported") +
                " (BertForSequenceClassification, "
                "RobertaForSequenceClassification, XLMRobertaForSequenceClassification, "
                "ModernBertForSequenceClassification, DebertaV2ForSequenceClassification)");
}

}  // namespace mcpclass::architectures
