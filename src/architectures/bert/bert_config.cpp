#include "architectures/bert/bert_config.hpp"

#include "architectures/common/activations.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

struct Known {
  const char* architecture;
  const char* model_type;
  BertFamily family;
  const char* prefix;
  BertHead head;
};
constexpr Known kKnown[] = {
    {"BertForSequenceClassification", "bert", BertFamily::bert, "bert", BertHead::sequence},
    {"RobertaForSequenceClassification", "roberta", BertFamily::roberta, "roberta",
     BertHead::sequence},
    {"XLMRobertaForSequenceClassification", "xlm-roberta", BertFamily::roberta, "roberta",
     BertHead::sequence},
    {"BertForTokenClassification", "bert", BertFamily::bert, "bert", BertHead::token},
    {"RobertaForTokenClassification", "roberta", BertFamily::roberta, "roberta", BertHead::token},
    {"XLMRobertaForTokenClassification", "xlm-roberta", BertFamily::roberta, "roberta",
     BertHead::token},
    {"BertModel", "bert", BertFamily::bert, "", BertHead::none},
    {"RobertaModel", "roberta", BertFamily::roberta, "", BertHead::none},
    {"XLMRobertaModel", "xlm-roberta", BertFamily::roberta, "", BertHead::none},
};

const char* head_name(BertHead head) {
  switch (head) {
    case BertHead::sequence:
      return "a sequence classifier";
    case BertHead::token:
      return "a token classifier";
    case BertHead::none:
      return "a base model (no head)";
  }
  return "";
}

// The architectures of one head, for messages.
std::string architectures(BertHead head) {
  std::string out;
  for (const auto& k : kKnown)
    if (k.head == head) out += (out.empty() ? "" : ", ") + std::string(k.architecture);
  return out;
}

}  // namespace

std::size_t BertConfig::position_offset() const {
  return family == BertFamily::roberta ? static_cast<std::size_t>(pad_token_id) + 1 : 0;
}

std::size_t BertConfig::max_tokens() const {
  return max_positions - position_offset();
}

BertConfig read_bert_config(const std::string& dir, BertHead head) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  BertConfig b;
  b.file = (std::filesystem::path(dir) / "config.json").string();
  b.architecture = checkpoint::config_architecture(c, b.file);
  const auto model_type = checkpoint::config_string(c, b.file, "model_type", "");
  const Known* known = nullptr;
  for (const auto& k : kKnown)
    if (b.architecture == k.architecture) known = &k;
  if (known == nullptr)
    checkpoint::config_error(b.file, "architecture '" + b.architecture + "' is not supported (" +
                                         architectures(head) + ")");
  if (known->head != head)
    checkpoint::config_error(b.file, "architecture '" + b.architecture + "' is " +
                                         head_name(known->head) + "; this needs " +
                                         head_name(head) + " (" + architectures(head) + ")");
  if (model_type != known->model_type)
    checkpoint::config_error(b.file, "model_type '" + model_type +
                                         "' does not match architecture '" + b.architecture +
                                         "' (expected '" + known->model_type + "')");
  b.family = known->family;
  b.head = known->head;
  b.prefix = known->prefix;
  b.vocab = checkpoint::config_size(c, b.file, "vocab_size", 10'000'000);
  b.hidden = checkpoint::config_size(c, b.file, "hidden_size", 65'536);
  b.layers = checkpoint::config_size(c, b.file, "num_hidden_layers", 1'000);
  b.heads = checkpoint::config_size(c, b.file, "num_attention_heads", 1'024);
  b.intermediate = checkpoint::config_size(c, b.file, "intermediate_size", 1'000'000);
  b.max_positions = checkpoint::config_size(c, b.file, "max_position_embeddings", 1'000'000, 512);
  b.type_vocab = checkpoint::config_size(c, b.file, "type_vocab_size", 1'000, 2);
  if (b.hidden % b.heads != 0)
    checkpoint::config_error(b.file, "hidden_size " + std::to_string(b.hidden) +
                                         " is not a multiple of " + "num_attention_heads " +
                                         std::to_string(b.heads));
  b.layer_norm_eps = static_cast<float>(
      checkpoint::config_number(c, b.file, "layer_norm_eps", 0.0, 1.0, b.layer_norm_eps));
  if (const auto* pad = c.if_contains("pad_token_id"); pad != nullptr && !pad->is_null()) {
    if (!pad->is_int64() || pad->as_int64() < 0 ||
        static_cast<std::size_t>(pad->as_int64()) >= b.vocab)
      checkpoint::config_error(b.file, "pad_token_id must be a token id below vocab_size");
    b.pad_token_id = pad->as_int64();
  }
  if (b.position_offset() >= b.max_positions)
    checkpoint::config_error(b.file,
                             "pad_token_id leaves no position below max_position_embeddings");
  b.activation = config_activation(c, b.file, "hidden_act");
  if (const auto pos = checkpoint::config_string(c, b.file, "position_embedding_type", "absolute");
      pos != "absolute")
    checkpoint::config_error(b.file,
                             "position_embedding_type '" + pos + "' is not supported (absolute)");
  b.labels = checkpoint::checkpoint_labels(c, b.file);
  if (head != BertHead::sequence) return b;  // problem_type applies to sequence heads only
  checkpoint::check_sequence_head(c, b.file, b.labels.size());
  return b;
}

}  // namespace mcpclass::architectures
