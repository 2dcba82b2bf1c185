#include "tokenizers/hf/json_tokenizer.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

namespace {

const boost::json::value& block(const boost::json::object& doc, const char* key) {
  static const boost::json::value null;
  const auto* v = doc.if_contains(key);
  return v == nullptr ? null : *v;
}

std::vector<AddedToken> added_tokens(const boost::json::object& doc) {
  std::vector<AddedToken> out;
  const auto* v = doc.if_contains("added_tokens");
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) throw classify::ClassifyError("'added_tokens' must be an array");
  for (const auto& item : v->get_array()) {
    const auto& o = as_object(item, "added token");
    AddedToken t;
    const std::int64_t id = int_field_or(o, "id", -1);
    if (id < 0 || id > INT32_MAX)
      throw classify::ClassifyError("added token: 'id' must be a valid id");
    t.id = static_cast<std::int32_t>(id);
    t.content = string_field(o, "content", "added token");
    if (t.content.empty())
      throw classify::ClassifyError("added token " + std::to_string(id) + " is empty");
    t.single_word = bool_field_or(o, "single_word", false);
    t.lstrip = bool_field_or(o, "lstrip", false);
    t.rstrip = bool_field_or(o, "rstrip", false);
    t.special = bool_field_or(o, "special", false);
    t.normalized = bool_field_or(o, "normalized", !t.special);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

JsonTokenizer::JsonTokenizer(const boost::json::value& document, const TokenizerOptions& options,
                             std::size_t config_max_length) {
  const auto& doc = as_object(document, "tokenizer.json");
  normalizer_ = make_normalizer(block(doc, "normalizer"));
  pre_tokenizer_ = make_pre_tokenizer(block(doc, "pre_tokenizer"));
  if (!doc.contains("model")) throw classify::ClassifyError("tokenizer.json has no 'model'");
  model_ = make_model(doc.at("model"));
  post_processor_ = make_post_processor(block(doc, "post_processor"));
  auto tokens = added_tokens(doc);
  for (const auto& t : tokens)
    vocab_size_ = std::max(vocab_size_, static_cast<std::size_t>(t.id) + 1);
  added_ = AddedVocabulary(std::move(tokens), normalizer_.get());
  for (std::int32_t id = 0;; ++id) {
    // The model's ids are dense from 0: the first id without a token ends them.
    if (model_->id_to_token(id).empty()) {
      vocab_size_ = std::max(vocab_size_, static_cast<std::size_t>(id));
      break;
    }
  }
  if (const auto& t = block(doc, "truncation"); t.is_object()) {
    const auto& o = t.get_object();
    max_length_ =
        static_cast<std::size_t>(std::max<std::int64_t>(0, int_field_or(o, "max_length", 0)));
    stride_ = static_cast<std::size_t>(std::max<std::int64_t>(0, int_field_or(o, "stride", 0)));
    side_ = string_field_or(o, "direction", "Right") == "Left" ? TruncationSide::left
                                                               : TruncationSide::right;
    const auto strategy = string_field_or(o, "strategy", "LongestFirst");
    if (strategy == "OnlyFirst")
      pair_truncation_ = PairTruncation::only_first;
    else if (strategy == "OnlySecond")
      pair_truncation_ = PairTruncation::only_second;
    else if (strategy != "LongestFirst")
      throw classify::ClassifyError("truncation strategy '" + strategy +
                                    "' is not LongestFirst, OnlyFirst or OnlySecond");
  }
  if (options.max_length > 0) {
    max_length_ = options.max_length;
    stride_ = options.stride;
  } else if (options.use_model_max_length && config_max_length > 0) {
    max_length_ = config_max_length;
    stride_ = options.stride;
  }
  if (max_length_ > 0) {
    const std::size_t added = post_processor_ ? post_processor_->added_tokens() : 0;
    if (max_length_ <= added + stride_)
      throw classify::ClassifyError("truncation to " + std::to_string(max_length_) +
                                    " tokens leaves no room past the " + std::to_string(added) +
                                    " special tokens and the stride of " + std::to_string(stride_));
  }
}

TokenizedText JsonTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  TokenizedText e = tokenize(text);
  if (max_length_ > 0) {
    const std::size_t added =
        add_special_tokens && post_processor_ ? post_processor_->added_tokens() : 0;
    truncate(e, max_length_ - added, stride_, side_);
  }
  if (post_processor_) post_processor_->process(e, text, add_special_tokens);
  return e;
}

TokenizedText JsonTokenizer::encode_pair(std::string_view text, std::string_view text_pair,
                                         bool add_special_tokens) const {
  // tokenizers (0.23: encode_single_sequence) models each text of a pair only until it has
  // max_length tokens, whole pre-tokenized pieces at a time (the limit does not apply to the
  // first text under only_second), then balances the two as truncate_encodings does.
  const std::size_t limit = max_length_;
  TokenizedText a =
      tokenize(text, pair_truncation_ == PairTruncation::only_second ? 0 : limit, side_);
  TokenizedText b = tokenize(text_pair, limit, side_);
  if (max_length_ > 0) {
    const std::size_t added =
        add_special_tokens && post_processor_ ? post_processor_->added_pair_tokens() : 0;
    if (max_length_ <= added)
      throw classify::ClassifyError("truncation to " + std::to_string(max_length_) +
                                    " tokens leaves no room past a pair's " +
                                    std::to_string(added) + " special tokens");
    truncate_pair(a, b, max_length_ - added, pair_truncation_, side_);
  }
  for (auto& t : b.type_ids) t = 1;  // the reference's type of a pair's second text unprocessed
  process_pair(post_processor_.get(), a, std::move(b), text, text_pair, add_special_tokens);
  return a;
}

TokenizedText JsonTokenizer::tokenize(std::string_view text, std::size_t limit,
                                      TruncationSide side) const {
  require_utf8(text);
  std::vector<Piece> pieces;
  pieces.push_back(Piece{NormalizedText(text, 0), {}, false});
  added_.split(pieces, false);
  if (normalizer_)
    for (Piece& p : pieces)
      if (!p.tokenized) normalizer_->normalize(p.text);
  added_.split(pieces, true);
  if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(pieces);

  // The model runs over the pieces in order (from the end for a left side) until `limit` tokens
  // are reached, whole pieces at a time; an added token's piece counts but never stops it.
  std::vector<std::vector<Token>> modelled(pieces.size());
  std::size_t begin = 0, end = pieces.size(), total = 0;
  auto model = [&](std::size_t i) {
    if (pieces[i].tokenized) {
      total += pieces[i].tokens.size();
      return false;
    }
    model_->tokenize(pieces[i].text.text(), modelled[i]);
    total += modelled[i].size();
    return limit > 0 && total >= limit;
  };
  if (side == TruncationSide::right) {
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (model(i)) {
        end = i + 1;
        break;
      }
  } else {
    for (std::size_t i = pieces.size(); i-- > 0;) {
      begin = i;
      if (model(i)) break;
    }
  }
  TokenizedText e;
  for (std::size_t i = begin; i < end; ++i) {
    const Piece& p = pieces[i];
    for (const Token& t : p.tokenized ? p.tokens : modelled[i]) {
      const Span s = p.text.original_span(t.begin, t.end);
      e.ids.push_back(t.id);
      e.tokens.push_back(t.value);
      e.offsets.emplace_back(s.start, s.end);
      e.type_ids.push_back(0);
      e.special_tokens_mask.push_back(0);
    }
  }
  return e;
}

}  // namespace mcpclass::tokenizers::hf
