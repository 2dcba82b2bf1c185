#include "architectures/common/sequence_model.hpp"

#include "architectures/bert/bert_model.hpp"
#include "architectures/deberta/deberta_model.hpp"
#include "architectures/modernbert/modernbert_model.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "checkpoint/lora_adapter.hpp"
#include "kernels/dense_rows.hpp"
#include "mcpclass/classify/errors.hpp"

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

// A task's model over a shared encoder says what it holds of its own: the encoder's parameters
// are held once for every task, its LoRA updates apart (what `model inspect --task` adds up).
template <class Model>
json::object with_task_sizes(json::object out, const Model& model) {
  if constexpr (requires { model.deltas(); }) {
    if (!model.deltas().empty()) {
      std::size_t lora = 0;
      for (const auto& layer : model.deltas()) lora += layer.parameters();
      out["shared_parameters"] = model.encoder()->parameters();
      out["lora_parameters"] = lora;
    }
  }
  return out;
}

// Any native sequence model behind SequenceModel.
template <class Model>
class Adapted final : public NativeCheckpointModel<Model, SequenceModel> {
 public:
  using NativeCheckpointModel<Model, SequenceModel>::NativeCheckpointModel;

  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const override {
    return this->model_.logits(inputs, threads);
  }
  json::object describe() const override {
    return with_task_sizes(describe_model(this->model_), this->model_);
  }
};

// Each task's updates, placed in the encoder's layers, and its head tensors: the base's that
// the encoder left with those the adapter saves whole.
// An update of a head module (BERT's pooler) is merged into the task's own copy of the head.
template <class Encoder>
EncoderDeltas task_deltas(const Encoder& encoder, checkpoint::LoraAdapter& adapter,
                          checkpoint::CheckpointTensors& head, const kernels::Compute& compute) {
  EncoderDeltas deltas(encoder.layers());
  checkpoint::LoraAdapter head_updates;
  head_updates.file = adapter.file;
  head_updates.scaling = adapter.scaling;
  for (auto& u : adapter.updates) {
    const auto slot = u.embedding ? std::nullopt : encoder.locate(u.module);
    if (!slot && head.tensors.tensors.contains(u.module + ".weight")) {
      head_updates.updates.push_back(std::move(u));
      continue;
    }
    if (!slot)
      throw classify::ClassifyError(
          "'" + adapter.file + "' adapts '" + u.module +
          "', which tasks sharing one base cannot keep apart (the encoder layers' linear "
          "products and the head's modules only): give this adapter a model of its own "
          "(adapter:)");
    const auto r = static_cast<std::size_t>(u.a.shape[0]);
    deltas[slot->layer].linear[slot->slot].push_back(
        kernels::make_low_rank(u.a.values, u.b.values, slot->in, r, slot->width, slot->offset,
                               adapter.scaling, compute.kernels));
  }
  checkpoint::merge_lora_adapter(std::move(head_updates), head);
  if constexpr (requires { encoder.project_positions(deltas); }) encoder.project_positions(deltas);
  return deltas;
}

template <class Model, class Encoder, class Checkpoint>
std::vector<std::unique_ptr<SequenceModel>> open_tasks(Checkpoint base,
                                                       const std::vector<TaskAdapter>& tasks,
                                                       const kernels::Compute& compute) {
  std::vector<checkpoint::LoraAdapter> adapters;
  for (const auto& t : tasks)
    adapters.push_back(checkpoint::read_lora_adapter(t.adapter_dir, base.tensors));
  const auto encoder = std::make_shared<const Encoder>(base.config, base.tensors, compute);
  std::vector<std::unique_ptr<SequenceModel>> out;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    auto& adapter = adapters[i];
    checkpoint::CheckpointTensors head;
    head.description = base.tensors.description;
    // The encoder took its tensors' values: what keeps them is the heads'.
    for (const auto& [name, t] : base.tensors.tensors.tensors)
      if (!t.values.empty()) {
        head.tensors.tensors[name] = t;
        head.file_of[name] = base.tensors.file_of[name];
      }
    for (auto& [name, t] : adapter.replaced) {
      const auto it = base.tensors.tensors.tensors.find(name);
      if (it != base.tensors.tensors.tensors.end() && it->second.values.empty())
        throw classify::ClassifyError(
            "'" + adapter.file + "' saves '" + name +
            "' whole, a tensor of the encoder the tasks share: give this adapter a model of its "
            "own (adapter:)");
      head.tensors.tensors[name] = std::move(t);
      head.file_of[name] = adapter.file;
    }
    auto config = base.config;
    const auto own = std::filesystem::path(tasks[i].adapter_dir) / "config.json";
    if (std::filesystem::exists(own))
      config.labels = checkpoint::checkpoint_labels(
          checkpoint::read_checkpoint_config(tasks[i].adapter_dir), own.string());
    out.push_back(std::make_unique<Adapted<Model>>(
        std::move(config), encoder, task_deltas(*encoder, adapter, head, compute), head, compute));
  }
  return out;
}

}  // namespace

std::vector<std::unique_ptr<SequenceModel>> open_task_models(
    const std::string& dir, const std::vector<TaskAdapter>& tasks,
    const checkpoint::CheckpointProgress& progress, const kernels::Compute& compute) {
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto architecture =
      checkpoint::config_architecture(checkpoint::read_checkpoint_config(dir), file);
  if (architecture == "ModernBertForSequenceClassification")
    return open_tasks<ModernBertModel, ModernBertEncoder>(
        read_modernbert_checkpoint(dir, BertHead::sequence, {}, progress), tasks, compute);
  if (architecture == "BertForSequenceClassification" ||
      architecture == "RobertaForSequenceClassification" ||
      architecture == "XLMRobertaForSequenceClassification")
    return open_tasks<BertSequenceModel, BertEncoder>(
        read_bert_checkpoint(dir, BertHead::sequence, {}, progress), tasks, compute);
  if (architecture == "DebertaV2ForSequenceClassification")
    return open_tasks<DebertaModel, DebertaEncoder>(
        read_deberta_checkpoint(dir, BertHead::sequence, {}, progress), tasks, compute);
  checkpoint::config_error(file, "architecture '" + architecture +
                                     "' cannot share one base among several adapters yet "
                                     "(BertForSequenceClassification, the RoBERTa variants, "
                                     "ModernBertForSequenceClassification, "
                                     "DebertaV2ForSequenceClassification)");
}

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
