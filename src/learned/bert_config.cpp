#include "learned/bert_config.hpp"

#include "learned/checkpoint_config.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <filesystem>

namespace mcpclass::learned {
using classify::ClassifyError;
}  // namespace mcpclass::learned

namespace mcpclass::learned::detail {

namespace json = boost::json;

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& why) {
  throw ClassifyError("'" + file + "': " + why);
}

std::string text(const json::object& c, const std::string& file, const char* key,
                 const std::string& fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (fallback.empty()) bad(file, std::string(key) + " is missing");
    return fallback;
  }
  if (!v->is_string()) bad(file, std::string(key) + " must be a string");
  return std::string(v->as_string());
}

// A size in [1, max]: bounds what a hostile config could make the loader allocate before the
// weights themselves are checked against it.
std::size_t size(const json::object& c, const std::string& file, const char* key, std::int64_t max,
                 std::int64_t fallback = 0) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (fallback == 0) bad(file, std::string(key) + " is missing");
    return static_cast<std::size_t>(fallback);
  }
  if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > max)
    bad(file, std::string(key) + " must be an integer in [1, " + std::to_string(max) + "]");
  return static_cast<std::size_t>(v->as_int64());
}

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
};

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
  const auto c = read_checkpoint_config(dir);
  BertConfig b;
  b.file = (std::filesystem::path(dir) / "config.json").string();
  const auto* arch = c.if_contains("architectures");
  if (arch == nullptr || !arch->is_array() || arch->as_array().size() != 1 ||
      !arch->as_array()[0].is_string())
    bad(b.file, "architectures must list exactly one architecture");
  b.architecture = std::string(arch->as_array()[0].as_string());
  const auto model_type = text(c, b.file, "model_type", "");
  const Known* known = nullptr;
  for (const auto& k : kKnown)
    if (b.architecture == k.architecture) known = &k;
  if (known == nullptr)
    bad(b.file,
        "architecture '" + b.architecture + "' is not supported (" + architectures(head) + ")");
  if (known->head != head)
    bad(b.file, "architecture '" + b.architecture + "' is a " +
                    (known->head == BertHead::token ? "token" : "sequence") +
                    " classifier; this needs a " +
                    (head == BertHead::token ? "token" : "sequence") + " classifier (" +
                    architectures(head) + ")");
  if (model_type != known->model_type)
    bad(b.file, "model_type '" + model_type + "' does not match architecture '" + b.architecture +
                    "' (expected '" + known->model_type + "')");
  b.family = known->family;
  b.head = known->head;
  b.prefix = known->prefix;
  b.vocab = size(c, b.file, "vocab_size", 10'000'000);
  b.hidden = size(c, b.file, "hidden_size", 65'536);
  b.layers = size(c, b.file, "num_hidden_layers", 1'000);
  b.heads = size(c, b.file, "num_attention_heads", 1'024);
  b.intermediate = size(c, b.file, "intermediate_size", 1'000'000);
  b.max_positions = size(c, b.file, "max_position_embeddings", 1'000'000, 512);
  b.type_vocab = size(c, b.file, "type_vocab_size", 1'000, 2);
  if (b.hidden % b.heads != 0)
    bad(b.file, "hidden_size " + std::to_string(b.hidden) + " is not a multiple of " +
                    "num_attention_heads " + std::to_string(b.heads));
  if (const auto* eps = c.if_contains("layer_norm_eps"); eps != nullptr && !eps->is_null()) {
    boost::system::error_code ec;
    const double e = eps->to_number<double>(ec);
    if (ec || !(e > 0.0 && e < 1.0)) bad(b.file, "layer_norm_eps must be a number in (0, 1)");
    b.layer_norm_eps = static_cast<float>(e);
  }
  if (const auto* pad = c.if_contains("pad_token_id"); pad != nullptr && !pad->is_null()) {
    if (!pad->is_int64() || pad->as_int64() < 0 ||
        static_cast<std::size_t>(pad->as_int64()) >= b.vocab)
      bad(b.file, "pad_token_id must be a token id below vocab_size");
    b.pad_token_id = pad->as_int64();
  }
  if (b.position_offset() >= b.max_positions)
    bad(b.file, "pad_token_id leaves no position below max_position_embeddings");
  const auto act = text(c, b.file, "hidden_act", "gelu");
  if (act == "gelu")
    b.activation = HiddenActivation::gelu;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    b.activation = HiddenActivation::gelu_tanh;
  else if (act == "relu")
    b.activation = HiddenActivation::relu;
  else
    bad(b.file, "hidden_act '" + act + "' is not supported (gelu, gelu_new, relu)");
  if (const auto pos = text(c, b.file, "position_embedding_type", "absolute"); pos != "absolute")
    bad(b.file, "position_embedding_type '" + pos + "' is not supported (absolute)");
  b.labels = checkpoint_labels(c, b.file);
  if (head == BertHead::token) return b;  // problem_type applies to sequence heads only
  const auto problem = text(c, b.file, "problem_type", "single_label_classification");
  if (problem != "single_label_classification")
    bad(b.file, "problem_type '" + problem +
                    "' is not supported yet (single_label_classification: softmax over labels)");
  if (b.labels.size() < 2)
    bad(b.file, "a sequence classifier needs at least 2 labels (1 label is regression)");
  return b;
}

}  // namespace mcpclass::learned::detail
