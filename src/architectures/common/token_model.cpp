#include "architectures/common/token_model.hpp"

#include "architectures/bert/bert_token_model.hpp"
#include "architectures/deberta/deberta_token_model.hpp"
#include "architectures/modernbert/modernbert_token_model.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

std::string token_head(std::size_t labels) {
  return std::to_string(labels) +
         " logits a token, softmax, spans merged as the transformers token-classification "
         "pipeline does (token_classifier)";
}

json::object describe_model(const BertTokenModel& model) {
  const auto& c = model.config();
  return describe_bert(
      c, model.parameters(),
      "then every token's final hidden state through classifier: " + token_head(c.labels.size()));
}

json::object describe_model(const ModernBertTokenModel& model) {
  const auto& c = model.config();
  return describe_modernbert(c, model.parameters(),
                             "then every token's final hidden state through head.dense, " +
                                 std::string(activation_description(c.classifier_activation)) +
                                 ", head.norm and classifier: " + token_head(c.labels.size()));
}

json::object describe_model(const DebertaTokenModel& model) {
  const auto& c = model.config();
  return describe_deberta(
      c, model.parameters(),
      "then every token's final hidden state through classifier: " + token_head(c.labels.size()));
}

// Any native token model behind TokenModel.
template <class Model>
class Adapted final : public NativeCheckpointModel<Model, TokenModel> {
 public:
  using NativeCheckpointModel<Model, TokenModel>::NativeCheckpointModel;

  std::vector<std::vector<float>> logits(std::span<const BertInput> inputs,
                                         std::size_t threads) const override {
    return this->model_.logits(inputs, threads);
  }
  json::object describe() const override { return describe_model(this->model_); }
};

}  // namespace

std::unique_ptr<TokenModel> open_token_model(const std::string& dir, const std::string& adapter_dir,
                                             const checkpoint::CheckpointProgress& progress,
                                             const kernels::Compute& compute) {
  const auto config = checkpoint::read_checkpoint_config(dir);
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto architecture = checkpoint::config_architecture(config, file);
  if (architecture == "ModernBertForTokenClassification")
    return std::make_unique<Adapted<ModernBertTokenModel>>(dir, adapter_dir, progress, compute);
  if (architecture == "DebertaV2ForTokenClassification")
    return std::make_unique<Adapted<DebertaTokenModel>>(dir, adapter_dir, progress, compute);
  if (architecture == "BertForTokenClassification" ||
      architecture == "RobertaForTokenClassification" ||
      architecture == "XLMRobertaForTokenClassification")
    return std::make_unique<Adapted<BertTokenModel>>(dir, adapter_dir, progress, compute);
  checkpoint::config_error(
      file, "architecture '" + architecture + "' " +
                (architecture.ends_with("ForSequenceClassification")
                     ? "is a sequence classifier; this needs a token classifier"
                     : "is not a supported token classifier") +
                " (BertForTokenClassification, RobertaForTokenClassification, "
                "XLMRobertaForTokenClassification, ModernBertForTokenClassification, "
                "DebertaV2ForTokenClassification)");
}

}  // namespace mcpclass::architectures
