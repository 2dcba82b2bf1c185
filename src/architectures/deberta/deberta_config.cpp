#include "architectures/deberta/deberta_config.hpp"

#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

constexpr const char* kSequence = "DebertaV2ForSequenceClassification";
constexpr const char* kToken = "DebertaV2ForTokenClassification";

// An integer in [low, high]; `fallback` when absent or null (DeBERTa's -1 and 0 mean "none").
std::int64_t config_integer(const json::object& c, const std::string& file, const char* key,
                            std::int64_t low, std::int64_t high, std::int64_t fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_int64() || v->as_int64() < low || v->as_int64() > high)
    checkpoint::config_error(file, std::string(key) + " must be an integer in [" +
                                       std::to_string(low) + ", " + std::to_string(high) + "]");
  return v->as_int64();
}

// A '|'-separated option list ("p2c|c2p", "layer_norm"), lower-cased and trimmed, as
// DebertaV2Config and DebertaV2Encoder split theirs.
std::vector<std::string> split_options(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::vector<std::string> out;
  for (std::size_t from = 0; from <= s.size();) {
    auto to = s.find('|', from);
    if (to == std::string::npos) to = s.size();
    auto part = s.substr(from, to - from);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    out.push_back(std::move(part));
    from = to + 1;
  }
  return out;
}

// "p2c|c2p" (older configs) or ["p2c", "c2p"], as DebertaV2Config.__init__ reads it.
void read_att_types(const json::object& c, DebertaConfig& d) {
  const auto* v = c.if_contains("pos_att_type");
  if (v == nullptr || v->is_null()) return;
  std::vector<std::string> names;
  if (v->is_string()) {
    names = split_options(std::string(v->as_string()));
  } else if (v->is_array()) {
    for (const auto& e : v->as_array()) {
      if (!e.is_string()) checkpoint::config_error(d.file, "pos_att_type must list strings");
      names.emplace_back(e.as_string());
    }
  } else {
    checkpoint::config_error(d.file, "pos_att_type must be a list or a '|'-separated string");
  }
  for (const auto& n : names) {
    if (n == "c2p")
      d.c2p = true;
    else if (n == "p2c")
      d.p2c = true;
    else if (!n.empty() && n != "none")
      checkpoint::config_error(d.file, "pos_att_type '" + n + "' is not supported (c2p, p2c)");
  }
}

}  // namespace

DebertaConfig read_deberta_config(const std::string& dir, BertHead head) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  DebertaConfig d;
  d.file = (std::filesystem::path(dir) / "config.json").string();
  d.architecture = checkpoint::config_architecture(c, d.file);
  const std::string wanted = head == BertHead::token ? kToken : kSequence;
  if (d.architecture != kSequence && d.architecture != kToken)
    checkpoint::config_error(d.file, "architecture '" + d.architecture +
                                         "' is not a DeBERTa-v2 classifier (" + wanted + ")");
  d.head = d.architecture == kToken ? BertHead::token : BertHead::sequence;
  if (d.head != head)
    checkpoint::config_error(d.file, "architecture '" + d.architecture + "' is a " +
                                         (d.head == BertHead::token ? "token" : "sequence") +
                                         " classifier; this needs a " +
                                         (head == BertHead::token ? "token" : "sequence") +
                                         " classifier (" + wanted + ")");
  if (const auto type = checkpoint::config_string(c, d.file, "model_type", "");
      type != "deberta-v2")
    checkpoint::config_error(d.file, "model_type '" + type + "' does not match architecture '" +
                                         d.architecture + "' (expected 'deberta-v2')");
  d.vocab = checkpoint::config_size(c, d.file, "vocab_size", 10'000'000);
  d.hidden = checkpoint::config_size(c, d.file, "hidden_size", 65'536);
  d.layers = checkpoint::config_size(c, d.file, "num_hidden_layers", 1'000);
  d.heads = checkpoint::config_size(c, d.file, "num_attention_heads", 1'024);
  d.intermediate = checkpoint::config_size(c, d.file, "intermediate_size", 1'000'000);
  d.max_positions = checkpoint::config_size(c, d.file, "max_position_embeddings", 1'000'000, 512);
  d.embedding = checkpoint::config_size(c, d.file, "embedding_size", 65'536,
                                        static_cast<std::int64_t>(d.hidden));
  d.type_vocab = static_cast<std::size_t>(config_integer(c, d.file, "type_vocab_size", 0, 1000, 0));
  if (d.hidden % d.heads != 0)
    checkpoint::config_error(d.file, "hidden_size " + std::to_string(d.hidden) +
                                         " is not a multiple of num_attention_heads " +
                                         std::to_string(d.heads));
  if (const auto size = config_integer(c, d.file, "attention_head_size", 1, 65'536,
                                       static_cast<std::int64_t>(d.head_dim()));
      static_cast<std::size_t>(size) != d.head_dim())
    checkpoint::config_error(d.file, "attention_head_size " + std::to_string(size) +
                                         " is not hidden_size / num_attention_heads (" +
                                         std::to_string(d.head_dim()) + "): not supported");
  if (const auto size = config_integer(c, d.file, "pooler_hidden_size", 1, 65'536,
                                       static_cast<std::int64_t>(d.hidden));
      static_cast<std::size_t>(size) != d.hidden)
    checkpoint::config_error(d.file, "pooler_hidden_size " + std::to_string(size) +
                                         " is not hidden_size " + std::to_string(d.hidden) +
                                         " (the classifier reads hidden_size values)");
  if (config_integer(c, d.file, "conv_kernel_size", 0, 1'000, 0) > 0)
    checkpoint::config_error(d.file,
                             "conv_kernel_size > 0 (DeBERTa-v2 xlarge's convolution after the "
                             "first layer) is not supported");
  d.layer_norm_eps =
      static_cast<float>(checkpoint::config_number(c, d.file, "layer_norm_eps", 0.0, 1.0, 1e-7));
  d.activation = config_activation(c, d.file, "hidden_act");
  d.pooler_activation = config_activation(c, d.file, "pooler_hidden_act");
  d.position_biased_input = checkpoint::config_flag(c, d.file, "position_biased_input", true);
  d.relative_attention = checkpoint::config_flag(c, d.file, "relative_attention", false);
  d.share_att_key = checkpoint::config_flag(c, d.file, "share_att_key", false);
  d.position_buckets = config_integer(c, d.file, "position_buckets", -1, 65'536, -1);
  const auto max_rel = config_integer(c, d.file, "max_relative_positions", -1, 1'000'000, -1);
  d.max_relative_positions = max_rel < 1 ? d.max_positions : static_cast<std::size_t>(max_rel);
  read_att_types(c, d);
  for (const auto& part :
       split_options(checkpoint::config_string(c, d.file, "norm_rel_ebd", "none"))) {
    if (part == "layer_norm")
      d.rel_norm = true;
    else if (part != "none" && !part.empty())
      checkpoint::config_error(d.file,
                               "norm_rel_ebd '" + part + "' is not supported (none, layer_norm)");
  }
  d.labels = checkpoint::checkpoint_labels(c, d.file);
  if (head == BertHead::token) return d;
  checkpoint::check_sequence_head(c, d.file, d.labels.size());
  return d;
}

std::int64_t relative_bucket(std::int64_t relative, std::int64_t bucket_size,
                             std::int64_t max_position) {
  if (bucket_size <= 0 || max_position <= 0) return relative;
  const std::int64_t mid = bucket_size / 2;
  const std::int64_t abs_pos =
      relative < mid && relative > -mid ? mid - 1 : (relative < 0 ? -relative : relative);
  if (abs_pos <= mid) return relative;
  // torch: abs_pos / mid in float32, log of the float32 (max_position - 1) / mid, ceil.
  const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
  const float base =
      static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid));
  const float log_pos = std::ceil(std::log(ratio) / std::log(base) * static_cast<float>(mid - 1)) +
                        static_cast<float>(mid);
  return (relative < 0 ? -1 : 1) * static_cast<std::int64_t>(log_pos);
}

}  // namespace mcpclass::architectures
