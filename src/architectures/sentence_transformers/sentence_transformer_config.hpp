// Internal: a sentence-transformers model directory as the library saves and the Hub publishes
// it (e.g. sentence-transformers/all-MiniLM-L12-v2): `modules.json` lists the modules in order
// (models.Transformer, models.Pooling, optionally models.Normalize), the Transformer's directory
// holds a Hugging Face base model (config.json, model.safetensors, tokenizer.json) and
// `sentence_bert_config.json` (max_seq_length, do_lower_case), the Pooling's directory its
// `config.json`. Read and checked before any weight; the names and meanings are those of
// sentence_transformers/models/{Transformer,Pooling,Normalize}.py.
#pragma once

#include <cstddef>
#include <string>

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

struct SentenceTransformerConfig {
  std::string dir;              ///< The model directory (holding modules.json).
  std::string modules_file;     ///< dir/modules.json, for messages.
  std::string transformer_dir;  ///< The Transformer module's directory (path "" = dir).
  std::string pooling_file;     ///< The Pooling module's config.json, for messages.
  SentencePooling pooling;
  bool normalize = false;  ///< A models.Normalize module follows the pooling.
  /// sentence_bert_config.json's max_seq_length; 0 = not set (the model's own limit applies).
  std::size_t max_seq_length = 0;
  bool do_lower_case = false;  ///< Lowercase texts before tokenizing.
};

/// True when `path` is a directory holding a modules.json.
bool is_sentence_transformer_dir(const std::string& path);

/// Reads and checks modules.json, the Pooling config and sentence_bert_config.json of `dir`.
/// Throws ClassifyError naming the file and the key for a missing module or file, a module type
/// this library does not compute (e.g. models.Dense), modules in another order, a path outside
/// `dir`, an unknown pooling key or mode, no pooling mode, or a bad max_seq_length.
SentenceTransformerConfig read_sentence_transformer_config(const std::string& dir);

}  // namespace mcpclass::architectures
