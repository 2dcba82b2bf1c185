// Internal: a sentence-transformers model directory as the library saves and the Hub publishes
// it (e.g. sentence-transformers/all-MiniLM-L12-v2): `modules.json` lists the modules in order
// (models.Transformer, models.Pooling, any models.Dense, optionally models.Normalize), the
// Transformer's directory
// holds a Hugging Face base model (config.json, model.safetensors, tokenizer.json) and
// `sentence_bert_config.json` (max_seq_length, do_lower_case), the Pooling's directory its
// `config.json`, each Dense's directory its `config.json` (in_features, out_features, bias,
// activation_function) and `model.safetensors` (linear.weight, linear.bias), and the model
// directory's `config_sentence_transformers.json` its `prompts` and `default_prompt_name`. Read
// and checked before any weight; the names and meanings are those of
// sentence_transformers/models/{Transformer,Pooling,Dense,Normalize}.py and
// SentenceTransformer.py.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Pooling's modes. Several may be on: their vectors are concatenated in this order (cls, max,
/// mean, mean_sqrt_len, weightedmean, lasttoken), as Pooling.forward does.
struct SentencePooling {
  std::size_t word_embedding_dimension = 0;
  bool cls = false, max = false, mean = false, mean_sqrt_len = false;
  bool weighted_mean = false, last_token = false;

  /// Modes that are on.
  std::size_t modes() const;
  /// The sentence embedding's width: modes() × word_embedding_dimension.
  std::size_t dimension() const { return modes() * word_embedding_dimension; }
  /// e.g. "mean" or "cls+max", as Pooling.get_pooling_mode_str names them.
  std::string describe() const;
};

/// A models.Dense module: sentence_embedding ← activation(linear(sentence_embedding)).
struct SentenceDense {
  enum class Activation { identity, tanh };
  std::string dir;   ///< Its directory (config.json, model.safetensors).
  std::string file;  ///< Its config.json, for messages.
  std::size_t in = 0, out = 0;
  bool bias = true;
  Activation activation = Activation::tanh;  ///< Dense.__init__'s default nn.Tanh()
  /// e.g. "768 → 3072, no bias, Identity".
  std::string describe() const;
};

struct SentenceTransformerConfig {
  std::string dir;              ///< The model directory (holding modules.json).
  std::string modules_file;     ///< dir/modules.json, for messages.
  std::string transformer_dir;  ///< The Transformer module's directory (path "" = dir).
  std::string pooling_file;     ///< The Pooling module's config.json, for messages.
  SentencePooling pooling;
  /// Pooling's include_prompt: false leaves the prompt's tokens out of the pooling (INSTRUCTOR).
  bool include_prompt = true;
  std::vector<SentenceDense> dense;  ///< models.Dense modules after the pooling, in order.
  bool normalize = false;            ///< A models.Normalize module comes last.
  /// config_sentence_transformers.json's prompts (SentenceTransformer's defaults "query" and
  /// "document" empty, then the file's) and default_prompt_name (none: no prompt by default).
  std::map<std::string, std::string> prompts = {{"query", ""}, {"document", ""}};
  std::optional<std::string> default_prompt_name;
  std::string prompts_file;  ///< config_sentence_transformers.json, for messages.
  /// The embedding's width: the last Dense's out_features, else the pooling's.
  std::size_t dimension() const { return dense.empty() ? pooling.dimension() : dense.back().out; }
  /// The text prepended to every text for `name` (empty: the default_prompt_name's, or none).
  /// Throws ClassifyError naming the known prompts for an unknown name.
  std::string prompt(const std::string& name) const;
  /// sentence_bert_config.json's max_seq_length; 0 = not set (the model's own limit applies).
  std::size_t max_seq_length = 0;
  bool do_lower_case = false;  ///< Lowercase texts before tokenizing.
};

/// True when `path` is a directory holding a modules.json.
bool is_sentence_transformer_dir(const std::string& path);

/// Reads and checks modules.json, the Pooling config and sentence_bert_config.json of `dir`.
/// Throws ClassifyError naming the file and the key for a missing module or file, a module type
/// this library does not compute (e.g. models.LayerNorm), modules in another order, a path
/// outside `dir`, an unknown pooling key or mode, no pooling mode, a bad max_seq_length, a Dense
/// of an unknown activation_function or whose in_features is not the width before it, or a
/// default_prompt_name that names no prompt.
SentenceTransformerConfig read_sentence_transformer_config(const std::string& dir);

}  // namespace mcpclass::architectures
