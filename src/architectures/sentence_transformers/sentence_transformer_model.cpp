#include "architectures/sentence_transformers/sentence_transformer_model.hpp"

#include "architectures/common/dense_weights.hpp"
#include "architectures/common/sequence_model.hpp"
#include "architectures/sentence_transformers/sentence_pooling.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <cmath>
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

// ModernBertModel saved on its own has no prefix; one saved from a model with a head (a
// fill-mask or classifier checkpoint) keeps "model.".
void find_prefix(ModernBertConfig& c, const checkpoint::CheckpointTensors& file) {
  const auto& t = file.tensors.tensors;
  c.prefix = t.count("embeddings.tok_embeddings.weight") != 0 ? "" : "model";
}

// A decoder saved as the base model has no prefix; one saved from Gemma3ForCausalLM or
// Qwen3ForCausalLM keeps "model.".
void find_prefix(DecoderConfig& c, const checkpoint::CheckpointTensors& file) {
  c.prefix = file.tensors.tensors.count("embed_tokens.weight") != 0 ? "" : "model";
}

// The tensors of a model with a head that a base model has no use for (sentence-transformers'
// AutoModel drops them too), and those of the layers past a Matryoshka cut.
template <class Config>
void drop_unused(checkpoint::CheckpointTensors& file, const Config& c, std::size_t model_layers) {
  const std::string p = c.prefix.empty() ? "" : c.prefix + ".";
  for (auto& [name, tensor] : file.tensors.tensors) {
    if (!c.prefix.empty() && !name.starts_with(p)) tensor.values.clear();
    for (std::size_t i = c.layers; i < model_layers; ++i)
      if (name.starts_with(p + "layers." + std::to_string(i) + ".")) tensor.values.clear();
  }
}

std::size_t check_depth(std::size_t wanted, std::size_t own, const std::string& what,
                        const std::string& file) {
  if (wanted == 0) return own;
  if (wanted > own)
    throw classify::ClassifyError(what + " " + std::to_string(wanted) + " is more than the " +
                                  std::to_string(own) + " of '" + file + "'");
  return wanted;
}

}  // namespace

SentenceTransformerModel::Loaded SentenceTransformerModel::load(
    const std::string& dir, const checkpoint::CheckpointProgress& progress,
    const SentenceDepth& depth) {
  auto st = read_sentence_transformer_config(dir);
  const auto c = checkpoint::read_checkpoint_config(st.transformer_dir);
  const auto file = (std::filesystem::path(st.transformer_dir) / "config.json").string();
  const auto type = checkpoint::config_string(c, file, "model_type", "");
  BaseConfig base;
  std::size_t hidden = 0, layers = 0;
  const auto keep = [&](auto m) {
    hidden = m.hidden;
    layers = m.layers;
    base = std::move(m);
  };
  if (is_decoder_model_type(type))
    keep(read_decoder_config(st.transformer_dir));
  else if (type == "modernbert")
    keep(read_modernbert_config(st.transformer_dir, BertHead::none));
  else
    keep(read_bert_config(st.transformer_dir, BertHead::none));
  if (st.pooling.word_embedding_dimension != hidden)
    checkpoint::config_error(
        st.pooling_file,
        "word_embedding_dimension " + std::to_string(st.pooling.word_embedding_dimension) +
            " is not the Transformer's hidden_size " + std::to_string(hidden) + " (" + file + ")");
  SentenceDepth d;
  d.layers = check_depth(depth.layers, layers, "layers", file);
  d.dimensions = check_depth(depth.dimensions, st.dimension(), "dimensions",
                             st.dense.empty() ? st.pooling_file : st.dense.back().file);
  auto tensors = checkpoint::read_checkpoint_tensors(st.transformer_dir, {}, progress);
  std::visit(
      [&](auto& b) {
        find_prefix(b, tensors);
        b.layers = d.layers;
      },
      base);
  if (auto* m = std::get_if<ModernBertConfig>(&base)) {
    m->global_layer.resize(d.layers);
    m->final_norm = d.layers == layers || m->final_norm_at_every_exit;
  }
  if (auto* m = std::get_if<DecoderConfig>(&base)) {
    m->sliding_layer.resize(d.layers);
    m->final_norm = d.layers == layers;
  }
  return {std::move(st), std::move(base), layers, d, std::move(tensors)};
}

SentenceTransformerModel::Encoder SentenceTransformerModel::make_encoder(
    const BaseConfig& base, checkpoint::CheckpointTensors& tensors,
    const kernels::Compute& compute) {
  if (const auto* m = std::get_if<ModernBertConfig>(&base)) {
    Encoder out(std::in_place_type<ModernBertEncoder>, *m, tensors, compute);
    return out;
  }
  if (const auto* m = std::get_if<DecoderConfig>(&base)) {
    Encoder out(std::in_place_type<DecoderEncoder>, *m, tensors, compute);
    return out;
  }
  return Encoder(std::in_place_type<BertEncoder>, std::get<BertConfig>(base), tensors, compute);
}

SentenceTransformerModel::SentenceTransformerModel(const std::string& dir,
                                                   const checkpoint::CheckpointProgress& progress,
                                                   const kernels::Compute& compute,
                                                   const SentenceDepth& depth)
    : SentenceTransformerModel(load(dir, progress, depth), compute) {}

SentenceTransformerModel::SentenceTransformerModel(Loaded loaded, const kernels::Compute& compute)
    : config_(std::move(loaded.config)),
      base_(std::move(loaded.base)),
      model_layers_(loaded.model_layers),
      depth_(loaded.depth),
      encoder_(make_encoder(base_, loaded.tensors, compute)) {
  if (const auto* m = std::get_if<ModernBertConfig>(&base_)) {
    drop_unused(loaded.tensors, *m, model_layers_);
    require_every_tensor_taken(loaded.tensors, *m);
  }
  if (const auto* m = std::get_if<DecoderConfig>(&base_)) {
    drop_unused(loaded.tensors, *m, model_layers_);
    // A causal LM's tied or own output projection means nothing to an encoder.
    if (auto it = loaded.tensors.tensors.tensors.find("lm_head.weight");
        it != loaded.tensors.tensors.tensors.end())
      it->second.values.clear();
    require_every_tensor_taken(loaded.tensors, m->architecture, m->file,
                               "attention_bias and num_hidden_layers");
  }
  for (const auto& d : config_.dense) {
    auto t = checkpoint::read_checkpoint_tensors(d.dir);
    dense_.push_back(take_dense(t, compute.in_float(), "linear", d.in, d.out, d.bias));
    require_every_tensor_taken(t, "models.Dense", d.file, "bias, in_features and out_features");
  }
}

const std::string& SentenceTransformerModel::architecture() const {
  return std::visit([](const auto& b) -> const std::string& { return b.architecture; }, base_);
}

const std::string& SentenceTransformerModel::config_file() const {
  return std::visit([](const auto& b) -> const std::string& { return b.file; }, base_);
}

std::size_t SentenceTransformerModel::vocab() const {
  return std::visit([](const auto& b) { return b.vocab; }, base_);
}

std::size_t SentenceTransformerModel::parameters() const {
  std::size_t n = std::visit([](const auto& e) { return e.parameters(); }, encoder_);
  for (const auto& d : dense_) n += d.parameters();
  return n;
}

std::size_t SentenceTransformerModel::max_tokens() const {
  const auto own = std::visit([](const auto& b) { return b.max_tokens(); }, base_);
  return config_.max_seq_length == 0 ? own : std::min(own, config_.max_seq_length);
}

std::vector<float> SentenceTransformerModel::embeddings(std::span<const BertInput> inputs,
                                                        std::size_t threads, bool normalize,
                                                        std::size_t prompt_tokens) const {
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
  const auto states =
      std::visit([&](const auto& e) { return e.hidden_states(present, threads); }, encoder_);
  auto pooled = pool_sentences(states, config_.pooling, config_.include_prompt ? 0 : prompt_tokens);
  std::size_t width = config_.pooling.dimension();
  if (!dense_.empty()) {
    // Each text's vector at the start of its own row block, as it would be alone (bert_model.cpp).
    const std::size_t blocks = present.size() * kernels::kRowBlock;
    std::vector<float> x(blocks * width, 0.0f);
    for (std::size_t k = 0; k < present.size(); ++k)
      std::copy_n(pooled.data() + k * width, width, x.data() + k * kernels::kRowBlock * width);
    for (std::size_t k = 0; k < dense_.size(); ++k) {
      const auto& layer = dense_[k];
      std::vector<float> y(blocks * layer.out);
      kernels::linear(layer, x.data(), blocks, y.data());
      if (config_.dense[k].activation == SentenceDense::Activation::tanh)
        for (auto& v : y) v = std::tanh(v);
      x = std::move(y);
      width = layer.out;
    }
    pooled.assign(present.size() * width, 0.0f);
    for (std::size_t k = 0; k < present.size(); ++k)
      std::copy_n(x.data() + k * kernels::kRowBlock * width, width, pooled.data() + k * width);
  }
  for (std::size_t k = 0; k < present.size(); ++k)
    std::copy_n(pooled.data() + k * width, d, out.data() + where[k] * d);
  if (normalize) normalize_rows(out, d);
  return out;
}

json::object SentenceTransformerModel::describe() const {
  std::string projections;
  for (const auto& d : config_.dense) projections += ", a Dense " + d.describe();
  const auto what = "then the " + config_.pooling.describe() + " pooling of the text's tokens" +
                    projections + (config_.normalize ? ", L2-normalized" : "") + " (a " +
                    std::to_string(dimension()) + "-d sentence embedding)";
  json::object out;
  if (const auto* m = std::get_if<ModernBertConfig>(&base_)) {
    out = describe_modernbert(*m, parameters(), what);
  } else if (const auto* decoder = std::get_if<DecoderConfig>(&base_)) {
    out = describe_decoder(*decoder, parameters(), what);
  } else {
    out = describe_bert(std::get<BertConfig>(base_), parameters(), what);
  }
  out["max_tokens"] = max_tokens();
  out["pooling"] = config_.pooling.describe();
  out["normalize"] = config_.normalize;
  out["do_lower_case"] = config_.do_lower_case;
  out["dimension"] = dimension();
  // 2D Matryoshka: what was chosen against what the model has.
  out["layers"] = json::object{{"computed", depth_.layers}, {"of", model_layers_}};
  out["dimensions"] = json::object{{"kept", depth_.dimensions}, {"of", config_.dimension()}};
  json::array dense;
  for (const auto& d : config_.dense) dense.emplace_back(d.describe());
  out["dense"] = std::move(dense);
  json::object prompts;
  for (const auto& [name, text] : config_.prompts) prompts[name] = text;
  out["prompts"] = std::move(prompts);
  out["default_prompt_name"] =
      config_.default_prompt_name ? json::value(*config_.default_prompt_name) : json::value();
  out["include_prompt"] = config_.include_prompt;
  return out;
}

}  // namespace mcpclass::architectures
