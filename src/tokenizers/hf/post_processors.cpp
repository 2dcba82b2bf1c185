#include "tokenizers/hf/post_processors.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/byte_level.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

namespace {

bool continuation(std::string_view text, std::uint32_t at) {
  return at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
}

// The reference's process_offsets: offsets leave out the spaces at a byte-level token's ends.
// The reference moves them by characters of the text (its Node and Python bindings trim offsets
// already counted in characters), so a trimmed NBSP or ideographic space moves them by all its
// bytes.
void trim_offsets(TokenizedText& e, std::string_view text, bool add_prefix_space) {
  auto is_space = [](char32_t c) { return c == kByteLevelSpace || is_white_space(c); };
  for (std::size_t i = 0; i < e.tokens.size(); ++i) {
    const std::string& tok = e.tokens[i];
    auto& [b, en] = e.offsets[i];
    std::vector<char32_t> cs;
    std::size_t p = 0;
    while (p < tok.size()) {
      std::size_t len = 0;
      cs.push_back(decode_utf8(tok, p, len));
      p += len;
    }
    std::size_t lead = 0, trail = 0;
    while (lead < cs.size() && is_space(cs[lead])) ++lead;
    while (trail < cs.size() && is_space(cs[cs.size() - 1 - trail])) ++trail;
    if (lead > 0) {
      if ((i == 0 || b == 0) && add_prefix_space && lead == 1) lead = 0;
      std::uint32_t at = b;
      for (std::size_t k = 0; k < lead && at < en; ++k) do
          ++at;
        while (continuation(text, at));
      b = std::min(at, en);
    }
    if (trail > 0) {
      // Only when the end is at least `trail` characters into the text.
      std::uint32_t at = en;
      std::size_t k = 0;
      for (; k < trail && at > 0; ++k) do
          --at;
        while (at > 0 && continuation(text, at));
      if (k == trail) en = std::max(at, b);
    }
  }
  for (auto& o : e.overflowing) trim_offsets(o, text, add_prefix_space);
}

struct SpecialToken {
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
};

// One element of a template: a special token or a sequence (A = 0, B = 1), with its type id.
struct TemplatePart {
  bool is_sequence;
  SpecialToken special;
  std::uint32_t type_id;
  int sequence = 0;
};

void append(TokenizedText& out, const TokenizedText& e, std::uint32_t type_id) {
  out.ids.insert(out.ids.end(), e.ids.begin(), e.ids.end());
  out.tokens.insert(out.tokens.end(), e.tokens.begin(), e.tokens.end());
  out.offsets.insert(out.offsets.end(), e.offsets.begin(), e.offsets.end());
  out.type_ids.insert(out.type_ids.end(), e.ids.size(), type_id);
  out.special_tokens_mask.insert(out.special_tokens_mask.end(), e.special_tokens_mask.begin(),
                                 e.special_tokens_mask.end());
}

void append_special(TokenizedText& out, const SpecialToken& special, std::uint32_t type_id) {
  for (std::size_t k = 0; k < special.ids.size(); ++k) {
    out.ids.push_back(special.ids[k]);
    out.tokens.push_back(special.tokens[k]);
    out.offsets.emplace_back(0, 0);
    out.type_ids.push_back(type_id);
    out.special_tokens_mask.push_back(1);
  }
}

// The pair template over a and b: a ← the joined encoding.
void apply_pair_template(TokenizedText& a, const TokenizedText& b,
                         const std::vector<TemplatePart>& parts) {
  TokenizedText out;
  for (const auto& part : parts) {
    if (part.is_sequence)
      append(out, part.sequence == 0 ? a : b, part.type_id);
    else
      append_special(out, part.special, part.type_id);
  }
  a = std::move(out);
}

void apply_template(TokenizedText& e, const std::vector<TemplatePart>& parts) {
  TokenizedText out;
  for (const auto& part : parts) {
    if (part.is_sequence)
      append(out, e, part.type_id);
    else
      append_special(out, part.special, part.type_id);
  }
  out.overflowing = std::move(e.overflowing);
  for (auto& o : out.overflowing) apply_template(o, parts);
  e = std::move(out);
}

std::size_t count_added(const std::vector<TemplatePart>& parts) {
  std::size_t n = 0;
  for (const auto& p : parts)
    if (!p.is_sequence) n += p.special.ids.size();
  return n;
}

// A single and a pair template (TemplateProcessing; BertProcessing and RobertaProcessing are
// fixed templates), with byte-level offset trimming first for RobertaProcessing.
class Template final : public PostProcessor {
 public:
  Template(std::vector<TemplatePart> single, std::vector<TemplatePart> pair, bool trim = false,
           bool add_prefix_space = false)
      : single_(std::move(single)),
        pair_(std::move(pair)),
        trim_(trim),
        add_prefix_space_(add_prefix_space) {}
  std::size_t added_tokens() const override { return count_added(single_); }
  std::size_t added_pair_tokens() const override { return count_added(pair_); }
  void process(TokenizedText& e, std::string_view text, bool add_special_tokens) const override {
    prepare(e, text);
    if (add_special_tokens) apply_template(e, single_);
  }
  void prepare(TokenizedText& e, std::string_view text) const override {
    if (trim_) trim_offsets(e, text, add_prefix_space_);
  }
  bool joins() const override { return true; }
  void join(TokenizedText& a, TokenizedText&& b) const override {
    apply_pair_template(a, b, pair_);
  }

 private:
  std::vector<TemplatePart> single_, pair_;
  bool trim_, add_prefix_space_;
};

class ByteLevelProcessor final : public PostProcessor {
 public:
  ByteLevelProcessor(bool trim, bool add_prefix_space)
      : trim_(trim), add_prefix_space_(add_prefix_space) {}
  std::size_t added_tokens() const override { return 0; }
  void process(TokenizedText& e, std::string_view text, bool) const override { prepare(e, text); }
  void prepare(TokenizedText& e, std::string_view text) const override {
    if (trim_) trim_offsets(e, text, add_prefix_space_);
  }

 private:
  bool trim_, add_prefix_space_;
};

class Sequence final : public PostProcessor {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  std::size_t added_tokens() const override {
    std::size_t n = 0;
    for (const auto& p : parts_) n += p->added_tokens();
    return n;
  }
  void process(TokenizedText& e, std::string_view text, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(e, text, add_special_tokens);
  }
  std::size_t added_pair_tokens() const override {
    std::size_t n = 0;
    for (const auto& p : parts_) n += p->added_pair_tokens();
    return n;
  }
  void prepare(TokenizedText& e, std::string_view text) const override {
    for (const auto& p : parts_) p->prepare(e, text);
  }
  bool joins() const override {
    for (const auto& p : parts_)
      if (p->joins()) return true;
    return false;
  }
  void join(TokenizedText& a, TokenizedText&& b) const override {
    for (const auto& p : parts_)
      if (p->joins()) return p->join(a, std::move(b));
    PostProcessor::join(a, std::move(b));
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

// ["[CLS]", 101]
SpecialToken token_pair(const boost::json::object& o, const char* key, const std::string& what) {
  const auto& a = array_field(o, key, what);
  const std::int64_t id = a.size() == 2 ? integer_or_minus_one(a[1]) : -1;
  if (id < 0 || id > INT32_MAX || !a[0].is_string())
    throw classify::ClassifyError(what + ": '" + key + "' must be [token, id]");
  return {{static_cast<std::int32_t>(id)}, {std::string(a[0].get_string())}};
}

// The "single" or "pair" template of a TemplateProcessing block.
std::vector<TemplatePart> template_parts(const boost::json::object& o, const char* key) {
  const std::string what = "post_processor TemplateProcessing";
  const auto* specials = o.if_contains("special_tokens");
  std::vector<TemplatePart> parts;
  for (const auto& v : array_field(o, key, what)) {
    const auto& item = as_object(v, what + " item");
    if (const auto* seq = item.if_contains("Sequence")) {
      const auto& so = as_object(*seq, what + " Sequence");
      const std::string id = string_field_or(so, "id", "A");
      if (id != "A" && id != "B")
        throw classify::ClassifyError(what + ": a Sequence id is 'A' or 'B', not '" + id + "'");
      parts.push_back({true,
                       {},
                       static_cast<std::uint32_t>(int_field_or(so, "type_id", 0)),
                       id == "A" ? 0 : 1});
      continue;
    }
    const auto* sp = item.if_contains("SpecialToken");
    if (sp == nullptr)
      throw classify::ClassifyError(what + ": an item is neither Sequence nor SpecialToken");
    const auto& so = as_object(*sp, what + " SpecialToken");
    const std::string name = string_field(so, "id", what);
    const auto* def = specials != nullptr && specials->is_object()
                          ? specials->get_object().if_contains(name)
                          : nullptr;
    if (def == nullptr)
      throw classify::ClassifyError(what + ": special token '" + name +
                                    "' is not in special_tokens");
    const auto& d = as_object(*def, what + " special token");
    SpecialToken st;
    for (const auto& value : array_field(d, "ids", what)) {
      const std::int64_t id = integer_or_minus_one(value);
      if (id < 0 || id > INT32_MAX)
        throw classify::ClassifyError(what + ": ids of '" + name + "' must be valid ids");
      st.ids.push_back(static_cast<std::int32_t>(id));
    }
    for (const auto& t : array_field(d, "tokens", what)) {
      if (!t.is_string())
        throw classify::ClassifyError(what + ": tokens of '" + name + "' must be strings");
      st.tokens.emplace_back(t.get_string());
    }
    if (st.ids.size() != st.tokens.size())
      throw classify::ClassifyError(what + ": '" + name + "' has unequal ids and tokens");
    parts.push_back(
        {false, std::move(st), static_cast<std::uint32_t>(int_field_or(so, "type_id", 0))});
  }
  return parts;
}

}  // namespace

namespace {

// b appended to a, each token keeping its type id (the reference's Encoding::merge).
void concatenate(TokenizedText& a, const TokenizedText& b) {
  const auto types = b.type_ids;
  append(a, b, 0);
  std::copy(types.begin(), types.end(),
            a.type_ids.end() - static_cast<std::ptrdiff_t>(types.size()));
}

}  // namespace

void PostProcessor::join(TokenizedText& a, TokenizedText&& b) const {
  concatenate(a, b);
}

void process_pair(const PostProcessor* processor, TokenizedText& a, TokenizedText&& b,
                  std::string_view text, std::string_view text_pair, bool add_special_tokens) {
  if (processor != nullptr) {
    processor->prepare(a, text);
    processor->prepare(b, text_pair);
  }
  if (processor != nullptr && add_special_tokens && processor->joins())
    processor->join(a, std::move(b));
  else
    concatenate(a, b);
}

std::unique_ptr<PostProcessor> make_post_processor(const boost::json::value& block) {
  if (block.is_null()) return nullptr;
  const auto& o = as_object(block, "post_processor");
  const std::string type = string_field(o, "type", "post_processor");
  const std::string what = "post_processor " + type;
  if (type == "TemplateProcessing") {
    auto single = template_parts(o, "single");
    // A file without a pair template joins pairs as the single one does sequence A.
    auto pair = o.contains("pair") ? template_parts(o, "pair") : single;
    return std::make_unique<Template>(std::move(single), std::move(pair));
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    const auto cls = token_pair(o, "cls", what), sep = token_pair(o, "sep", what);
    std::vector<TemplatePart> single{{false, cls, 0}, {true, {}, 0}, {false, sep, 0}};
    auto pair = single;
    // tokenizers' bert.rs: [CLS] A [SEP] B:1 [SEP]:1; roberta.rs: <s> A </s> </s> B </s>, all
    // of type 0 (RoBERTa has one token type).
    const std::uint32_t second = type == "BertProcessing" ? 1 : 0;
    if (type == "RobertaProcessing") pair.push_back({false, sep, 0});
    pair.push_back({true, {}, second, 1});
    pair.push_back({false, sep, second});
    if (type == "BertProcessing")
      return std::make_unique<Template>(std::move(single), std::move(pair));
    return std::make_unique<Template>(std::move(single), std::move(pair),
                                      bool_field_or(o, "trim_offsets", true),
                                      bool_field_or(o, "add_prefix_space", true));
  }
  if (type == "ByteLevel")
    return std::make_unique<ByteLevelProcessor>(bool_field_or(o, "trim_offsets", true),
                                                bool_field_or(o, "add_prefix_space", true));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (const auto& v : array_field(o, "processors", what))
      if (auto p = make_post_processor(v)) parts.push_back(std::move(p));
    return std::make_unique<Sequence>(std::move(parts));
  }
  throw classify::ClassifyError("unsupported post_processor type '" + type + "'");
}

}  // namespace mcpclass::tokenizers::hf
