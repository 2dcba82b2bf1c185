#include "architectures/sentence_transformers/sentence_transformer_config.hpp"

#include "checkpoint/checkpoint_config.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <array>
#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTransformer = "sentence_transformers.models.Transformer";
constexpr const char* kPooling = "sentence_transformers.models.Pooling";
constexpr const char* kNormalize = "sentence_transformers.models.Normalize";
constexpr const char* kDense = "sentence_transformers.models.Dense";

// Transformer.load tries these names in this order (older releases wrote per-family names).
constexpr std::array<const char*, 7> kSbertConfigs = {
    "sentence_bert_config.json",       "sentence_roberta_config.json",
    "sentence_distilbert_config.json", "sentence_camembert_config.json",
    "sentence_albert_config.json",     "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json"};

struct Module {
  std::string type;
  std::string dir;
};

// A module's path, relative and inside the model directory.
std::string module_dir(const std::string& dir, const std::string& file, std::size_t i,
                       const json::object& m) {
  const auto path = checkpoint::config_string(m, file, "path", "-");
  const std::string key = "modules[" + std::to_string(i) + "].path";
  if (path == "-") checkpoint::config_error(file, key + " is missing");
  const fs::path p(path);
  if (p.is_absolute())
    checkpoint::config_error(file, key + " '" + path + "' must be relative to the model");
  for (const auto& part : p)
    if (part == "..")
      checkpoint::config_error(file, key + " '" + path + "' leaves the model directory");
  return (fs::path(dir) / p).lexically_normal().string();
}

std::vector<Module> read_modules(const std::string& dir, const std::string& file) {
  const auto doc = checkpoint::read_json_file(file, "a sentence-transformers model has one");
  if (!doc.is_array() || doc.as_array().empty())
    checkpoint::config_error(file, "must be a non-empty list of modules");
  std::vector<Module> out;
  for (std::size_t i = 0; i < doc.as_array().size(); ++i) {
    const auto& v = doc.as_array()[i];
    if (!v.is_object())
      checkpoint::config_error(file, "modules[" + std::to_string(i) + "] is not an object");
    const auto& m = v.as_object();
    out.push_back({checkpoint::config_string(m, file, "type", ""), module_dir(dir, file, i, m)});
  }
  return out;
}

SentencePooling read_pooling(const std::string& file, bool& include_prompt) {
  const auto c = checkpoint::read_json_object_file(file, "the Pooling module's directory has one");
  include_prompt = checkpoint::config_flag(c, file, "include_prompt", true);
  SentencePooling p;
  p.word_embedding_dimension = checkpoint::config_size(c, file, "word_embedding_dimension", 65'536);
  // Pooling.__init__'s defaults: mean on, the others off.
  const std::array<std::pair<const char*, bool*>, 6> modes = {{
      {"pooling_mode_cls_token", &p.cls},
      {"pooling_mode_max_tokens", &p.max},
      {"pooling_mode_mean_tokens", &p.mean},
      {"pooling_mode_mean_sqrt_len_tokens", &p.mean_sqrt_len},
      {"pooling_mode_weightedmean_tokens", &p.weighted_mean},
      {"pooling_mode_lasttoken", &p.last_token},
  }};
  for (const auto& [key, flag] : modes)
    *flag = checkpoint::config_flag(c, file, key, flag == &p.mean);
  for (const auto& [key, value] : c) {
    bool known =
        key == "word_embedding_dimension" || key == "include_prompt" || key == "pooling_mode";
    for (const auto& m : modes) known |= key == m.first;
    if (!known)
      checkpoint::config_error(file, "unknown pooling key '" + std::string(key) +
                                         "' (this library computes cls, max, mean, mean_sqrt_len, "
                                         "weightedmean and lasttoken pooling)");
  }
  // `pooling_mode` (a string) overrides the flags, as in Pooling.__init__.
  if (const auto mode = checkpoint::config_string(c, file, "pooling_mode", "-"); mode != "-") {
    for (const auto& m : modes) *m.second = false;
    if (mode == "mean")
      p.mean = true;
    else if (mode == "max")
      p.max = true;
    else if (mode == "cls")
      p.cls = true;
    else if (mode == "weightedmean")
      p.weighted_mean = true;
    else if (mode == "lasttoken")
      p.last_token = true;
    else
      checkpoint::config_error(
          file, "pooling_mode '" + mode +
                    "' is not a pooling mode (mean, max, cls, weightedmean, lasttoken)");
  }
  if (p.modes() == 0)
    checkpoint::config_error(file, "no pooling_mode_* is true: no sentence embedding");
  return p;
}

SentenceDense read_dense(const std::string& dir, std::size_t width) {
  SentenceDense d;
  d.dir = dir;
  d.file = (fs::path(dir) / "config.json").string();
  const auto c = checkpoint::read_json_object_file(d.file, "the Dense module's directory has one");
  d.in = checkpoint::config_size(c, d.file, "in_features", 1'000'000);
  d.out = checkpoint::config_size(c, d.file, "out_features", 1'000'000);
  d.bias = checkpoint::config_flag(c, d.file, "bias", true);
  const auto activation = checkpoint::config_string(c, d.file, "activation_function",
                                                    "torch.nn.modules.activation.Tanh");
  if (activation == "torch.nn.modules.linear.Identity")
    d.activation = SentenceDense::Activation::identity;
  else if (activation == "torch.nn.modules.activation.Tanh")
    d.activation = SentenceDense::Activation::tanh;
  else
    checkpoint::config_error(d.file, "activation_function '" + activation +
                                         "' is not supported (torch.nn.modules.linear.Identity, "
                                         "torch.nn.modules.activation.Tanh)");
  if (d.in != width)
    checkpoint::config_error(d.file, "in_features " + std::to_string(d.in) +
                                         " is not the width before it, " + std::to_string(width));
  return d;
}

// SentenceTransformer._load_sbert_model: config_sentence_transformers.json's prompts update the
// defaults {"query": "", "document": ""}; the file is optional.
void read_prompts(SentenceTransformerConfig& st) {
  st.prompts_file = (fs::path(st.dir) / "config_sentence_transformers.json").string();
  if (!fs::exists(st.prompts_file)) return;
  const auto c = checkpoint::read_json_object_file(st.prompts_file, "");
  if (const auto* p = c.if_contains("prompts"); p != nullptr && !p->is_null()) {
    if (!p->is_object())
      checkpoint::config_error(st.prompts_file, "prompts must be an object of name: text");
    for (const auto& [name, text] : p->as_object()) {
      if (!text.is_string())
        checkpoint::config_error(st.prompts_file,
                                 "prompts." + std::string(name) + " must be a string");
      st.prompts[std::string(name)] = std::string(text.as_string());
    }
  }
  if (const auto* d = c.if_contains("default_prompt_name"); d != nullptr && !d->is_null()) {
    if (!d->is_string())
      checkpoint::config_error(st.prompts_file, "default_prompt_name must be a string or null");
    st.default_prompt_name = std::string(d->as_string());
    if (st.prompts.count(*st.default_prompt_name) == 0)
      checkpoint::config_error(st.prompts_file, "default_prompt_name '" + *st.default_prompt_name +
                                                    "' is not one of the prompts");
  }
}

void read_sbert_config(SentenceTransformerConfig& st) {
  for (const char* name : kSbertConfigs) {
    const auto file = (fs::path(st.transformer_dir) / name).string();
    if (!fs::exists(file)) continue;
    const auto c = checkpoint::read_json_object_file(file, "");
    st.max_seq_length = checkpoint::config_size(c, file, "max_seq_length", 1'000'000, -1);
    if (st.max_seq_length == static_cast<std::size_t>(-1)) st.max_seq_length = 0;
    st.do_lower_case = checkpoint::config_flag(c, file, "do_lower_case", false);
    return;
  }
  checkpoint::config_error(
      (fs::path(st.transformer_dir) / kSbertConfigs[0]).string(),
      "is missing (the Transformer module's max_seq_length and do_lower_case)");
}

}  // namespace

std::size_t SentencePooling::modes() const {
  return static_cast<std::size_t>(cls) + max + mean + mean_sqrt_len + weighted_mean + last_token;
}

std::string SentencePooling::describe() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : "+") + std::string(name);
  };
  add(cls, "cls");
  add(mean, "mean");
  add(max, "max");
  add(mean_sqrt_len, "mean_sqrt_len_tokens");
  add(weighted_mean, "weightedmean");
  add(last_token, "lasttoken");
  return out;
}

std::string SentenceDense::describe() const {
  return std::to_string(in) + " → " + std::to_string(out) + (bias ? "" : ", no bias") + ", " +
         (activation == Activation::identity ? "Identity" : "Tanh");
}

std::string SentenceTransformerConfig::prompt(const std::string& name) const {
  if (name.empty()) return default_prompt_name ? prompts.at(*default_prompt_name) : "";
  if (const auto it = prompts.find(name); it != prompts.end()) return it->second;
  std::string known;
  for (const auto& [n, text] : prompts) known += (known.empty() ? "" : ", ") + n;
  throw classify::ClassifyError("prompt '" + name + "' is not one of the prompts of '" + dir +
                                "' (" + known + ")");
}

bool is_sentence_transformer_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / "modules.json", ec);
}

SentenceTransformerConfig read_sentence_transformer_config(const std::string& dir) {
  SentenceTransformerConfig st;
  st.dir = dir;
  st.modules_file = (fs::path(dir) / "modules.json").string();
  const auto modules = read_modules(dir, st.modules_file);
  const auto& file = st.modules_file;
  if (modules[0].type != kTransformer)
    checkpoint::config_error(
        file, "modules[0] is '" + modules[0].type + "'; the first module must be " + kTransformer);
  if (modules.size() < 2 || modules[1].type != kPooling)
    checkpoint::config_error(file,
                             std::string("modules[1] must be ") + kPooling +
                                 " (the module that makes one vector of the token embeddings)");
  st.transformer_dir = modules[0].dir;
  st.pooling_file = (fs::path(modules[1].dir) / "config.json").string();
  st.pooling = read_pooling(st.pooling_file, st.include_prompt);
  std::size_t i = 2;
  for (; i < modules.size() && modules[i].type == kDense; ++i)
    st.dense.push_back(read_dense(modules[i].dir, st.dimension()));
  if (i < modules.size() && modules[i].type != kNormalize)
    checkpoint::config_error(file, "modules[" + std::to_string(i) + "] is '" + modules[i].type +
                                       "', which this library does not compute (it computes "
                                       "Transformer, Pooling, Dense and Normalize)");
  if (i + 1 < modules.size())
    checkpoint::config_error(file, "modules[" + std::to_string(i + 1) + "] is '" +
                                       modules[i + 1].type + "'; nothing may follow " + kNormalize);
  st.normalize = i < modules.size();
  read_prompts(st);
  read_sbert_config(st);
  return st;
}

}  // namespace mcpclass::architectures
