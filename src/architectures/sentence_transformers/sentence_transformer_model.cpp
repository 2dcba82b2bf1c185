#include "architectures/sentence_transformers/sentence_transformer_model.hpp"

#include "architectures/common/sequence_model.hpp"
#include "architectures/sentence_transformers/sentence_pooling.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <algorithm>
#include <filesystem>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

// transformers' BertModel state dict has no prefix; a checkpoint saved from a model with a head
// (or converted from one) keeps "bert." / "roberta.", which from_pretrained strips too.
void find_prefix(BertConfig& c, const checkpoint::CheckpointTensors& file) {
  const auto& t = file.tensors.tensors;
  if (t.count("embeddings.word_embeddings.weight") != 0) return;
  const std::string prefixed = c.family == BertFamily::bert ? "bert" : "roberta";
  if (t.count(prefixed + ".embeddings.word_embeddings.weight") != 0) c.prefix = prefixed;
}

}  // namespace

SentenceTransformerModel::Loaded SentenceTransformerModel::load(
    const std::string& dir, const checkpoint::CheckpointProgress& progress) {
  auto st = read_sentence_transformer_config(dir);
  auto bert = read_bert_config(st.transformer_dir, BertHead::none);
  if (st.pooling.word_embedding_dimension != bert.hidden)
    checkpoint::config_error(st.pooling_file,
                             "word_embedding_dimension " +
                                 std::to_string(st.pooling.word_embedding_dimension) +
                                 " is not the Transformer's hidden_size " +
                                 std::to_string(bert.hidden) + " (" + bert.file + ")");
  auto tensors = checkpoint::read_checkpoint_tensors(st.transformer_dir, {}, progress);
  find_prefix(bert, tensors);
  return {std::move(st), {std::move(bert), std::move(tensors)}};
}

SentenceTransformerModel::SentenceTransformerModel(const std::string& dir,
                                                   const checkpoint::CheckpointProgress& progress,
                                                   const kernels::Compute& compute)
    : SentenceTransformerModel(load(dir, progress), compute) {}

SentenceTransformerModel::SentenceTransformerModel(Loaded loaded, const kernels::Compute& compute)
    : config_(std::move(loaded.config)),
      bert_(std::move(loaded.checkpoint.config)),
      encoder_(bert_, loaded.checkpoint.tensors, compute) {}

std::size_t SentenceTransformerModel::max_tokens() const {
  const auto own = bert_.max_tokens();
  return config_.max_seq_length == 0 ? own : std::min(own, config_.max_seq_length);
}

std::vector<float> SentenceTransformerModel::embeddings(std::span<const BertInput> inputs,
                                                        std::size_t threads, bool normalize) const {
  // Texts of no tokens (a tokenizer without special tokens, an empty text) are left out of the
  // forward pass: Pooling's clamped mean of nothing is zero.
  std::vector<BertInput> present;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].ids.empty()) {
      present.push_back(inputs[i]);
      where.push_back(i);
    }
  const std::size_t d = dimension();
  std::vector<float> out(inputs.size() * d, 0.0f);
  if (present.empty()) return out;
  const auto pooled = pool_sentences(encoder_.hidden_states(present, threads), config_.pooling);
  for (std::size_t k = 0; k < present.size(); ++k)
    std::copy_n(pooled.data() + k * d, d, out.data() + where[k] * d);
  if (normalize) normalize_rows(out, d);
  return out;
}

json::object SentenceTransformerModel::describe() const {
  auto out =
      describe_bert(bert_, parameters(),
                    "then the " + config_.pooling.describe() + " pooling of the text's tokens" +
                        (config_.normalize ? ", L2-normalized" : "") + " (a " +
                        std::to_string(dimension()) + "-d sentence embedding)");
  out["max_tokens"] = max_tokens();
  out["pooling"] = config_.pooling.describe();
  out["normalize"] = config_.normalize;
  out["do_lower_case"] = config_.do_lower_case;
  out["dimension"] = dimension();
  return out;
}

}  // namespace mcpclass::architectures
