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

// One element of a template: a special token or the sequence, with its type id.
struct TemplatePart {
  bool is_sequence;
  SpecialToken special;
  std::uint32_t type_id;
};

void apply_template(TokenizedText& e, const std::vector<TemplatePart>& parts) {
  TokenizedText out;
  for (const auto& part : parts) {
    if (part.is_sequence) {
      out.ids.insert(out.ids.end(), e.ids.begin(), e.ids.end());
      out.tokens.insert(out.tokens.end(), e.tokens.begin(), e.tokens.end());
      out.offsets.insert(out.offsets.end(), e.offsets.begin(), e.offsets.end());
      out.type_ids.insert(out.type_ids.end(), e.ids.size(), part.type_id);
      out.special_tokens_mask.insert(out.special_tokens_mask.end(), e.special_tokens_mask.begin(),
                                     e.special_tokens_mask.end());
    } else {
      for (std::size_t k = 0; k < part.special.ids.size(); ++k) {
        out.ids.push_back(part.special.ids[k]);
        out.tokens.push_back(part.special.tokens[k]);
        out.offsets.emplace_back(0, 0);
        out.type_ids.push_back(part.type_id);
        out.special_tokens_mask.push_back(1);
      }
    }
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

class Template final : public PostProcessor {
 public:
  explicit Template(std::vector<TemplatePart> parts) : parts_(std::move(parts)) {}
  std::size_t added_tokens() const override { return count_added(parts_); }
  void process(TokenizedText& e, std::string_view, bool add_special_tokens) const override {
    if (add_special_tokens) apply_template(e, parts_);
  }

 private:
  std::vector<TemplatePart> parts_;
};

class Roberta final : public PostProcessor {
 public:
  Roberta(std::vector<TemplatePart> parts, bool trim, bool add_prefix_space)
      : parts_(std::move(parts)), trim_(trim), add_prefix_space_(add_prefix_space) {}
  std::size_t added_tokens() const override { return count_added(parts_); }
  void process(TokenizedText& e, std::string_view text, bool add_special_tokens) const override {
    if (trim_) trim_offsets(e, text, add_prefix_space_);
    if (add_special_tokens) apply_template(e, parts_);
  }

 private:
  std::vector<TemplatePart> parts_;
  bool trim_, add_prefix_space_;
};

class ByteLevelProcessor final : public PostProcessor {
 public:
  ByteLevelProcessor(bool trim, bool add_prefix_space)
      : trim_(trim), add_prefix_space_(add_prefix_space) {}
  std::size_t added_tokens() const override { return 0; }
  void process(TokenizedText& e, std::string_view text, bool) const override {
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

std::vector<TemplatePart> template_parts(const boost::json::object& o) {
  const std::string what = "post_processor TemplateProcessing";
  const auto* specials = o.if_contains("special_tokens");
  std::vector<TemplatePart> parts;
  for (const auto& v : array_field(o, "single", what)) {
    const auto& item = as_object(v, what + " item");
    if (const auto* seq = item.if_contains("Sequence")) {
      const auto& so = as_object(*seq, what + " Sequence");
      parts.push_back({true, {}, static_cast<std::uint32_t>(int_field_or(so, "type_id", 0))});
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

std::unique_ptr<PostProcessor> make_post_processor(const boost::json::value& block) {
  if (block.is_null()) return nullptr;
  const auto& o = as_object(block, "post_processor");
  const std::string type = string_field(o, "type", "post_processor");
  const std::string what = "post_processor " + type;
  if (type == "TemplateProcessing") return std::make_unique<Template>(template_parts(o));
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    std::vector<TemplatePart> parts;
    parts.push_back({false, token_pair(o, "cls", what), 0});
    parts.push_back({true, {}, 0});
    parts.push_back({false, token_pair(o, "sep", what), 0});
    if (type == "BertProcessing") return std::make_unique<Template>(std::move(parts));
    return std::make_unique<Roberta>(std::move(parts), bool_field_or(o, "trim_offsets", true),
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
