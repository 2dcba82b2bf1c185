#include "tokenizers/hf/normalizers.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/precompiled_charsmap.hpp"
#include "tokenizers/hf/regex.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

#include <utf8proc.h>

#include <optional>

namespace mcpclass::tokenizers::hf {

namespace {

// Rust `char::to_lowercase`: the full mapping; only U+0130 lowers to two characters.
void lowercase(NormalizedText& t) {
  std::vector<CharChange> out;
  bool changed = false;
  for (char32_t c : t.chars()) {
    if (c == 0x130) {
      out.push_back({U'i', 0});
      out.push_back({0x307, 1});
      changed = true;
      continue;
    }
    const char32_t l =
        c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c)
                 : static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
    changed |= l != c;
    out.push_back({l, 0});
  }
  if (changed) t.transform(out, 0);
}

// BertNormalizer strips nonspacing marks only; the StripAccents normalizer every mark.
void strip_nonspacing_marks(NormalizedText& t) {
  t.filter([](char32_t c) { return !is_mark_nonspacing(c); });
}
void strip_combining_marks(NormalizedText& t) {
  t.filter([](char32_t c) { return !is_combining_mark(c); });
}

class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean, bool chinese, bool strip, bool lower)
      : clean_(clean), chinese_(chinese), strip_(strip), lower_(lower) {}
  void normalize(NormalizedText& t) const override {
    if (clean_) {
      t.filter([](char32_t c) { return !(c == 0 || c == 0xFFFD || is_bert_control(c)); });
      t.map([](char32_t c) { return is_bert_whitespace(c) ? U' ' : c; });
    }
    if (chinese_) {
      std::vector<CharChange> out;
      bool any = false;
      for (char32_t c : t.chars()) {
        if (is_chinese_char(c)) {
          out.push_back({U' ', 0});
          out.push_back({c, 1});
          out.push_back({U' ', 1});
          any = true;
        } else {
          out.push_back({c, 0});
        }
      }
      if (any) t.transform(out, 0);
    }
    if (strip_) {
      unicode_normalize(t, UnicodeForm::nfd);
      strip_nonspacing_marks(t);
    }
    if (lower_) lowercase(t);
  }

 private:
  bool clean_, chinese_, strip_, lower_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm f) : form_(f) {}
  void normalize(NormalizedText& t) const override { unicode_normalize(t, form_); }

 private:
  UnicodeForm form_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(NormalizedText& t) const override { lowercase(t); }
};

class StripAccents final : public Normalizer {
 public:
  void normalize(NormalizedText& t) const override { strip_combining_marks(t); }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormalizedText& t) const override {
    const auto cs = t.chars();
    std::size_t lead = 0, trail = 0;
    if (left_)
      while (lead < cs.size() && is_white_space(cs[lead])) ++lead;
    if (right_)
      while (trail < cs.size() - lead && is_white_space(cs[cs.size() - 1 - trail])) ++trail;
    if (lead == 0 && trail == 0) return;
    std::vector<CharChange> out;
    for (std::size_t i = lead; i + trail < cs.size(); ++i)
      out.push_back({cs[i], i + trail + 1 == cs.size() ? -static_cast<int>(trail) : 0});
    t.transform(out, lead);
  }

 private:
  bool left_, right_;
};

class Replace final : public Normalizer {
 public:
  Replace(std::string pattern, bool is_regex, std::string content)
      : regex_(is_regex ? pattern : Regex::escape(pattern)), content_(std::move(content)) {}
  void normalize(NormalizedText& t) const override {
    auto matches = regex_.find_all(t.text());
    std::erase_if(matches, [](const auto& m) { return m.first == m.second; });
    t.replace(matches, content_);
  }

 private:
  Regex regex_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string s) : s_(std::move(s)) {}
  void normalize(NormalizedText& t) const override { t.prepend(s_); }

 private:
  std::string s_;
};

class Nmt final : public Normalizer {
 public:
  void normalize(NormalizedText& t) const override {
    t.filter([](char32_t c) {
      return !((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
               c == 0x8F || c == 0x9F);
    });
    t.map([](char32_t c) -> char32_t {
      switch (c) {
        case 0x09:
        case 0x0A:
        case 0x0C:
        case 0x0D:
        case 0x1680:
        case 0x200B:
        case 0x200C:
        case 0x200D:
        case 0x200E:
        case 0x200F:
        case 0x2028:
        case 0x2029:
        case 0x2581:
        case 0xFEFF:
        case 0xFFFD:
          return U' ';
        default:
          return c;
      }
    });
  }
};

class Precompiled final : public Normalizer {
 public:
  explicit Precompiled(const std::string& base64)
      : map_(PrecompiledCharsmap::from_base64(base64)) {}
  void normalize(NormalizedText& t) const override { map_.normalize(t); }

 private:
  PrecompiledCharsmap map_;
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  void normalize(NormalizedText& t) const override {
    for (const auto& p : parts_) p->normalize(t);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

// BertNormalizer's strip_accents: null means "follow lowercase".
std::optional<bool> optional_bool(const boost::json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_bool())
    throw classify::ClassifyError(std::string("field '") + key + "' must be a boolean");
  return v->get_bool();
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const boost::json::value& block) {
  if (block.is_null()) return nullptr;
  const auto& o = as_object(block, "normalizer");
  const std::string type = string_field(o, "type", "normalizer");
  const std::string what = "normalizer " + type;
  if (type == "BertNormalizer") {
    const bool lower = bool_field_or(o, "lowercase", true);
    return std::make_unique<BertNormalizer>(
        bool_field_or(o, "clean_text", true), bool_field_or(o, "handle_chinese_chars", true),
        optional_bool(o, "strip_accents").value_or(lower), lower);
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkd);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip")
    return std::make_unique<Strip>(bool_field_or(o, "strip_left", true),
                                   bool_field_or(o, "strip_right", true));
  if (type == "Replace") {
    auto [pattern, is_regex] = pattern_field(o, what);
    return std::make_unique<Replace>(pattern, is_regex, string_field(o, "content", what));
  }
  if (type == "Prepend") return std::make_unique<Prepend>(string_field(o, "prepend", what));
  if (type == "Nmt") return std::make_unique<Nmt>();
  if (type == "Precompiled")
    return std::make_unique<Precompiled>(string_field_or(o, "precompiled_charsmap", ""));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const auto& v : array_field(o, "normalizers", what))
      if (auto n = make_normalizer(v)) parts.push_back(std::move(n));
    return std::make_unique<Sequence>(std::move(parts));
  }
  throw classify::ClassifyError("unsupported normalizer type '" + type + "'");
}

}  // namespace mcpclass::tokenizers::hf
