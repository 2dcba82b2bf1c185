#include "architectures/modernbert/modernbert_config.hpp"

#include "architectures/common/rope_config.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

void read_layer_types(const json::object& c, ModernBertConfig& m) {
  if (const auto sliding = read_sliding_layers(c, m.file, m.layers)) {
    for (const bool s : *sliding) m.global_layer.push_back(!s);
    return;
  }
  const auto every = checkpoint::config_size(c, m.file, "global_attn_every_n_layers", 1'000, 3);
  for (std::size_t i = 0; i < m.layers; ++i) m.global_layer.push_back(i % every == 0);
}

void read_ropes(const json::object& c, ModernBertConfig& m) {
  kernels::RopeSettings global, local;
  global.theta = checkpoint::config_number(c, m.file, "global_rope_theta", 1.0, 1e12, 160'000.0);
  local.theta = checkpoint::config_number(c, m.file, "local_rope_theta", 1.0, 1e12, 10'000.0);
  m.global_rope = global;
  m.local_rope = local;
  if (read_layer_type_ropes(c, m.file, m.max_positions, m.global_rope, m.local_rope)) return;
  // transformers applies rope_scaling to the RoPE of both layer types, each keeping its theta.
  if (const auto* scaling = config_object(c, m.file, "rope_scaling")) {
    m.global_rope = read_rope(*scaling, m.file, "rope_scaling", global, m.max_positions);
    m.local_rope = read_rope(*scaling, m.file, "rope_scaling", local, m.max_positions);
  }
}

// sentence-transformers' representation_contract (the vLLM Semantic Router's 2D Matryoshka
// exports): whether an early exit is final_norm'ed. Absent = transformers' raw hidden states.
bool read_intermediate_normalization(const json::object& c, const std::string& file) {
  const auto* contract = config_object(c, file, "representation_contract");
  if (contract == nullptr) return false;
  const auto v = checkpoint::config_string(*contract, file, "intermediate_normalization", "none");
  if (v != "none" && v != "final_norm")
    checkpoint::config_error(file, "representation_contract.intermediate_normalization '" + v +
                                       "' is not supported (none, final_norm)");
  return v == "final_norm";
}

}  // namespace

ModernBertConfig read_modernbert_config(const std::string& dir, BertHead head) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  ModernBertConfig m;
  m.file = (std::filesystem::path(dir) / "config.json").string();
  m.architecture = checkpoint::config_architecture(c, m.file);
  const auto type = checkpoint::config_string(c, m.file, "model_type", "");
  if (head == BertHead::none) {
    if (type != "modernbert")
      checkpoint::config_error(m.file, "model_type '" + type +
                                           "' is not a ModernBERT base model (expected "
                                           "'modernbert')");
    m.head = BertHead::none;
    m.architecture = "ModernBertModel";
  } else {
    m.head =
        m.architecture == "ModernBertForTokenClassification" ? BertHead::token : BertHead::sequence;
    const auto wanted =
        std::string(head == BertHead::token ? "ModernBertForTokenClassification"
                                            : "ModernBertForSequenceClassification");
    if (m.architecture != "ModernBertForSequenceClassification" &&
        m.architecture != "ModernBertForTokenClassification")
      checkpoint::config_error(m.file, "architecture '" + m.architecture +
                                           "' is not a ModernBERT " +
                                           (head == BertHead::token ? "token" : "sequence") +
                                           " classifier (" + wanted + ")");
    if (m.head != head)
      checkpoint::config_error(m.file, "architecture '" + m.architecture + "' is a " +
                                           (m.head == BertHead::token ? "token" : "sequence") +
                                           " classifier; this needs a " +
                                           (head == BertHead::token ? "token" : "sequence") +
                                           " classifier (" + wanted + ")");
    if (type != "modernbert")
      checkpoint::config_error(m.file, "model_type '" + type + "' does not match architecture '" +
                                           m.architecture + "' (expected 'modernbert')");
  }
  m.vocab = checkpoint::config_size(c, m.file, "vocab_size", 10'000'000);
  m.hidden = checkpoint::config_size(c, m.file, "hidden_size", 65'536);
  m.layers = checkpoint::config_size(c, m.file, "num_hidden_layers", 1'000);
  m.heads = checkpoint::config_size(c, m.file, "num_attention_heads", 1'024);
  m.intermediate = checkpoint::config_size(c, m.file, "intermediate_size", 1'000'000);
  m.max_positions = checkpoint::config_size(c, m.file, "max_position_embeddings", 1'000'000, 8192);
  if (m.hidden % m.heads != 0 || m.head_dim() % 2 != 0)
    checkpoint::config_error(m.file, "hidden_size " + std::to_string(m.hidden) +
                                         " is not an even multiple of num_attention_heads " +
                                         std::to_string(m.heads) +
                                         " (RoPE rotates pairs of dimensions)");
  m.norm_eps = static_cast<float>(checkpoint::config_number(c, m.file, "norm_eps", 0.0, 1.0, 1e-5));
  m.norm_bias = checkpoint::config_flag(c, m.file, "norm_bias", false);
  m.attention_bias = checkpoint::config_flag(c, m.file, "attention_bias", false);
  m.mlp_bias = checkpoint::config_flag(c, m.file, "mlp_bias", false);
  m.classifier_bias = checkpoint::config_flag(c, m.file, "classifier_bias", false);
  m.activation = config_activation(c, m.file, "hidden_activation");
  m.classifier_activation = config_activation(c, m.file, "classifier_activation");
  const auto pooling = checkpoint::config_string(c, m.file, "classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean")
    checkpoint::config_error(m.file,
                             "classifier_pooling '" + pooling + "' is not supported (cls, mean)");
  m.mean_pooling = pooling == "mean";
  m.local_attention = checkpoint::config_size(c, m.file, "local_attention", 1'000'000, 128);
  read_layer_types(c, m);
  read_ropes(c, m);
  m.final_norm_at_every_exit = read_intermediate_normalization(c, m.file);
  if (head == BertHead::none) return m;  // a base model's labels mean nothing
  m.labels = checkpoint::checkpoint_labels(c, m.file);
  if (head == BertHead::token) return m;  // problem_type applies to sequence heads only
  checkpoint::check_sequence_head(c, m.file, m.labels.size());
  return m;
}

}  // namespace mcpclass::architectures
