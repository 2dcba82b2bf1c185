#include "architectures/modernbert/modernbert_config.hpp"

#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

// One RoPE from `p` (a rope_parameters entry or the legacy rope_scaling, `where` names it in
// messages) over `base`, whose theta is already set.
kernels::RopeSettings read_rope(const json::object& p, const std::string& file,
                                const std::string& where, kernels::RopeSettings base,
                                std::size_t max_positions) {
  const std::string prefix = where + ".";
  auto key = [&](const char* k) { return prefix + k; };
  if (p.contains("rope_theta"))
    base.theta = checkpoint::config_number(p, file, "rope_theta", 1.0, 1e12, base.theta);
  std::string type = "default";
  if (p.contains("rope_type"))
    type = checkpoint::config_string(p, file, "rope_type", "default");
  else if (p.contains("type"))  // the older name of the key
    type = checkpoint::config_string(p, file, "type", "default");
  if (type == "default") {
    base.type = kernels::RopeSettings::Type::plain;
    return base;
  }
  if (type != "yarn")
    checkpoint::config_error(file,
                             key("rope_type") + " '" + type + "' is not supported (default, yarn)");
  base.type = kernels::RopeSettings::Type::yarn;
  constexpr double kHuge = 1e9;
  base.original_max_positions = checkpoint::config_number(
      p, file, "original_max_position_embeddings", 0.0, kHuge, static_cast<double>(max_positions));
  const double implied = static_cast<double>(max_positions) / base.original_max_positions;
  base.factor = checkpoint::config_number(p, file, "factor", 0.0, kHuge, implied);
  base.attention_factor = checkpoint::config_number(p, file, "attention_factor", 0.0, kHuge, -1.0);
  base.mscale = checkpoint::config_number(p, file, "mscale", 0.0, kHuge, 0.0);
  base.mscale_all_dim = checkpoint::config_number(p, file, "mscale_all_dim", 0.0, kHuge, 0.0);
  base.beta_fast = checkpoint::config_number(p, file, "beta_fast", 0.0, kHuge, 32.0);
  base.beta_slow = checkpoint::config_number(p, file, "beta_slow", 0.0, kHuge, 1.0);
  base.truncate = checkpoint::config_flag(p, file, "truncate", true);
  return base;
}

const json::object* object_at(const json::object& c, const std::string& file, const char* key) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) return nullptr;
  if (!v->is_object()) checkpoint::config_error(file, std::string(key) + " must be an object");
  return &v->as_object();
}

void read_layer_types(const json::object& c, ModernBertConfig& m) {
  if (const auto* types = c.if_contains("layer_types"); types != nullptr && !types->is_null()) {
    if (!types->is_array() || types->as_array().size() != m.layers)
      checkpoint::config_error(m.file, "layer_types must list " + std::to_string(m.layers) +
                                           " layers (num_hidden_layers)");
    for (const auto& t : types->as_array()) {
      const auto* name = t.if_string();
      if (name == nullptr || (*name != "full_attention" && *name != "sliding_attention"))
        checkpoint::config_error(m.file,
                                 "layer_types may hold only full_attention and sliding_attention");
      m.global_layer.push_back(*name == "full_attention");
    }
    return;
  }
  const auto every = checkpoint::config_size(c, m.file, "global_attn_every_n_layers", 1'000, 3);
  for (std::size_t i = 0; i < m.layers; ++i) m.global_layer.push_back(i % every == 0);
}

void read_ropes(const json::object& c, ModernBertConfig& m) {
  kernels::RopeSettings global, local;
  global.theta = checkpoint::config_number(c, m.file, "global_rope_theta", 1.0, 1e12, 160'000.0);
  local.theta = checkpoint::config_number(c, m.file, "local_rope_theta", 1.0, 1e12, 10'000.0);
  if (const auto* params = object_at(c, m.file, "rope_parameters")) {
    const auto* full = object_at(*params, m.file, "full_attention");
    const auto* sliding = object_at(*params, m.file, "sliding_attention");
    m.global_rope = full != nullptr ? read_rope(*full, m.file, "rope_parameters.full_attention",
                                                global, m.max_positions)
                                    : global;
    m.local_rope = sliding != nullptr
                       ? read_rope(*sliding, m.file, "rope_parameters.sliding_attention", local,
                                   m.max_positions)
                       : local;
    return;
  }
  // transformers applies rope_scaling to the RoPE of both layer types, each keeping its theta.
  if (const auto* scaling = object_at(c, m.file, "rope_scaling")) {
    m.global_rope = read_rope(*scaling, m.file, "rope_scaling", global, m.max_positions);
    m.local_rope = read_rope(*scaling, m.file, "rope_scaling", local, m.max_positions);
    return;
  }
  m.global_rope = global;
  m.local_rope = local;
}

// sentence-transformers' representation_contract (the vLLM Semantic Router's 2D Matryoshka
// exports): whether an early exit is final_norm'ed. Absent = transformers' raw hidden states.
bool read_intermediate_normalization(const json::object& c, const std::string& file) {
  const auto* contract = object_at(c, file, "representation_contract");
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
