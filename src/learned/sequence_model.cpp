#include "learned/sequence_model.hpp"

#include "learned/checkpoint_config.hpp"
#include "learned/dense_rows.hpp"
#include "learned/modernbert_model.hpp"

#include <filesystem>

namespace mcpclass::learned::detail {

namespace json = boost::json;

namespace {

// What every encoder's description starts with.
template <class Config>
json::object sizes(const Config& c, std::size_t parameters, const char* family) {
  return {
      {"family", family},
      {"hidden_size", c.hidden},
      {"num_hidden_layers", c.layers},
      {"num_attention_heads", c.heads},
      {"intermediate_size", c.intermediate},
      {"vocab_size", c.vocab},
      {"max_tokens", c.max_tokens()},
      {"parameters", parameters},
  };
}

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
  std::size_t global = 0;
  for (const bool g : c.global_layer) global += g ? 1 : 0;
  auto rope = [](const RopeSettings& r) {
    json::object o{{"theta", r.theta}};
    if (r.type == RopeSettings::Type::yarn) {
      o["type"] = "yarn";
      o["factor"] = r.factor;
      o["original_max_position_embeddings"] = r.original_max_positions;
    } else {
      o["type"] = "default";
    }
    return o;
  };
  auto out = sizes(c, model.parameters(), "modernbert");
  out["global_layers"] = global;
  out["local_attention"] = c.local_attention;
  out["global_rope"] = rope(c.global_rope);
  out["local_rope"] = rope(c.local_rope);
  out["classifier_pooling"] = c.mean_pooling ? "mean" : "cls";
  out["compute"] =
      "float32 on oneDNN sgemm: embeddings and LayerNorm, " + std::to_string(c.layers) +
      " pre-norm encoder layers (" + std::to_string(global) +
      " with global attention, the others a sliding window of ±" +
      std::to_string(c.local_attention / 2) + " tokens; RoPE; GeGLU with " +
      activation_description(c.activation) + "), final LayerNorm, " +
      (c.mean_pooling ? "the mean of all tokens" : "the first token") + " through head.dense, " +
      activation_description(c.classifier_activation) + " and head.norm, then " +
      std::to_string(c.labels.size()) + " logits and softmax";
  return out;
}

// Any native model whose config() has the common fields, behind SequenceModel.
template <class Model>
class Adapted final : public SequenceModel {
 public:
  Adapted(const std::string& dir, const std::string& adapter_dir,
          const CheckpointProgress& progress)
      : model_(dir, adapter_dir, progress) {}

  const std::string& architecture() const override { return model_.config().architecture; }
  const std::string& config_file() const override { return model_.config().file; }
  const std::vector<std::string>& labels() const override { return model_.config().labels; }
  std::size_t vocab() const override { return model_.config().vocab; }
  std::size_t max_tokens() const override { return model_.config().max_tokens(); }

  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const override {
    return model_.logits(inputs, threads);
  }

  json::object describe() const override { return describe_model(model_); }

 private:
  Model model_;
};

}  // namespace

json::object describe_bert(const BertConfig& c, std::size_t parameters, const std::string& head) {
  auto out = sizes(c, parameters, c.family == BertFamily::bert ? "bert" : "roberta");
  out["compute"] = "float32 on oneDNN sgemm: embeddings, " + std::to_string(c.layers) +
                   " post-norm encoder layers (self-attention, " +
                   activation_description(c.activation) + "), " + head;
  return out;
}

std::size_t sequence_rows(std::size_t tokens) {
  return padded_rows(tokens);
}

std::unique_ptr<SequenceModel> open_sequence_model(const std::string& dir,
                                                   const std::string& adapter_dir,
                                                   const CheckpointProgress& progress) {
  const auto config = read_checkpoint_config(dir);
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto architecture = config_architecture(config, file);
  if (architecture == "ModernBertForSequenceClassification")
    return std::make_unique<Adapted<ModernBertModel>>(dir, adapter_dir, progress);
  if (architecture == "BertForSequenceClassification" ||
      architecture == "RobertaForSequenceClassification" ||
      architecture == "XLMRobertaForSequenceClassification")
    return std::make_unique<Adapted<BertSequenceModel>>(dir, adapter_dir, progress);
  config_error(file, "architecture '" + architecture +
                         "' is not supported (BertForSequenceClassification, "
                         "RobertaForSequenceClassification, XLMRobertaForSequenceClassification, "
                         "ModernBertForSequenceClassification)");
}

}  // namespace mcpclass::learned::detail
