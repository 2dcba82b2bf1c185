#include "tokenizers/hf/pre_tokenizers.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/byte_level.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/regex.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

namespace {

// GPT-2's pattern, as the reference's ByteLevel uses it.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

template <class Pred>
void split_chars(std::vector<Piece>& pieces, Pred pred, SplitBehavior behavior) {
  split_pieces(pieces, [&](std::size_t, NormalizedText&& t) {
    return split_text(t, char_matches(t.text(), pred), behavior);
  });
}

class Bert final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_white_space, SplitBehavior::removed);
    split_chars(pieces, is_bert_punctuation, SplitBehavior::isolated);
  }
};

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        regex_(use_regex ? new Regex(kGpt2Pattern) : nullptr) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_pieces(pieces, [&](std::size_t, NormalizedText&& t) {
      if (add_prefix_space_ && !t.empty() && t.text().front() != ' ') t.prepend(" ");
      if (!regex_) return std::vector<NormalizedText>{std::move(t)};
      return split_text(t, regex_matches(*regex_, t.text(), false), SplitBehavior::isolated);
    });
    const auto& table = byte_level_chars();
    for (Piece& p : pieces) {
      if (p.tokenized) continue;
      const std::string& s = p.text.text();
      std::vector<CharChange> out;
      out.reserve(s.size());
      std::size_t i = 0;
      while (i < s.size()) {
        std::size_t len = 0;
        decode_utf8(s, i, len);
        for (std::size_t k = 0; k < len; ++k) {
          const std::string& m = table[static_cast<unsigned char>(s[i + k])];
          std::size_t ml = 0;
          out.push_back({decode_utf8(m, 0, ml), k > 0 ? 1 : 0});
        }
        i += len;
      }
      p.text.transform(out, 0);
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

class Whitespace final : public PreTokenizer {
 public:
  // The reference's `\w+|[^\w\s]+` with Rust regex's \w: Alphabetic, marks, decimal digits,
  // connector punctuation and joiners (PCRE2's \w lacks the marks).
  Whitespace()
      : regex_(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+)"
               R"(|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\s]+)") {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_pieces(pieces, [&](std::size_t, NormalizedText&& t) {
      return split_text(t, regex_matches(regex_, t.text(), true), SplitBehavior::removed);
    });
  }

 private:
  Regex regex_;
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_white_space, SplitBehavior::removed);
  }
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(SplitBehavior b) : behavior_(b) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_bert_punctuation, behavior_);
  }

 private:
  SplitBehavior behavior_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_numeric,
                individual_ ? SplitBehavior::isolated : SplitBehavior::contiguous);
  }

 private:
  bool individual_;
};

class CharDelimiterSplit final : public PreTokenizer {
 public:
  explicit CharDelimiterSplit(char32_t d) : d_(d) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_chars(
        pieces, [this](char32_t c) { return c == d_; }, SplitBehavior::removed);
  }

 private:
  char32_t d_;
};

class Split final : public PreTokenizer {
 public:
  Split(const std::string& pattern, bool is_regex, SplitBehavior b, bool invert)
      : regex_(is_regex ? pattern : Regex::escape(pattern)), behavior_(b), invert_(invert) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_pieces(pieces, [&](std::size_t, NormalizedText&& t) {
      return split_text(t, regex_matches(regex_, t.text(), invert_), behavior_);
    });
  }

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

enum class PrependScheme { always, first, never };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {
    std::size_t len = 0;
    replacement_char_ = decode_utf8(replacement_, 0, len);
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_pieces(pieces, [&](std::size_t, NormalizedText&& t) {
      std::vector<std::pair<std::size_t, std::size_t>> spaces;
      const std::string& s = t.text();
      for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == ' ') spaces.emplace_back(i, i + 1);
      t.replace(spaces, replacement_);
      const bool starts = t.text().compare(0, replacement_.size(), replacement_) == 0;
      if (scheme_ == PrependScheme::always && !starts) t.prepend(replacement_);
      if (scheme_ == PrependScheme::first && !starts && t.original_start() == 0)
        t.prepend(replacement_);
      if (!split_) return std::vector<NormalizedText>{std::move(t)};
      const char32_t r = replacement_char_;
      return split_text(t, char_matches(t.text(), [r](char32_t c) { return c == r; }),
                        SplitBehavior::merged_with_next);
    });
  }

 private:
  std::string replacement_;
  char32_t replacement_char_ = 0;
  PrependScheme scheme_;
  bool split_;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) p->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

PrependScheme prepend_scheme(const boost::json::object& o) {
  // Older files carry add_prefix_space instead of prepend_scheme.
  if (!o.contains("prepend_scheme"))
    return bool_field_or(o, "add_prefix_space", true) ? PrependScheme::always
                                                      : PrependScheme::never;
  const std::string s = string_field(o, "prepend_scheme", "Metaspace");
  if (s == "always") return PrependScheme::always;
  if (s == "first") return PrependScheme::first;
  if (s == "never") return PrependScheme::never;
  throw classify::ClassifyError("Metaspace: unknown prepend_scheme '" + s + "'");
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const boost::json::value& block) {
  if (block.is_null()) return nullptr;
  const auto& o = as_object(block, "pre_tokenizer");
  const std::string type = string_field(o, "type", "pre_tokenizer");
  const std::string what = "pre_tokenizer " + type;
  if (type == "BertPreTokenizer") return std::make_unique<Bert>();
  if (type == "ByteLevel")
    return std::make_unique<ByteLevel>(bool_field_or(o, "add_prefix_space", true),
                                       bool_field_or(o, "use_regex", true));
  if (type == "Whitespace") return std::make_unique<Whitespace>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Punctuation")
    return std::make_unique<Punctuation>(
        split_behavior(string_field_or(o, "behavior", "Isolated")));
  if (type == "Digits")
    return std::make_unique<Digits>(bool_field_or(o, "individual_digits", false));
  if (type == "CharDelimiterSplit") {
    const std::string d = string_field(o, "delimiter", what);
    if (d.empty()) throw classify::ClassifyError(what + ": empty delimiter");
    std::size_t len = 0;
    return std::make_unique<CharDelimiterSplit>(decode_utf8(d, 0, len));
  }
  if (type == "Split") {
    auto [pattern, is_regex] = pattern_field(o, what);
    return std::make_unique<Split>(pattern, is_regex,
                                   split_behavior(string_field(o, "behavior", what)),
                                   bool_field_or(o, "invert", false));
  }
  if (type == "Metaspace") {
    const std::string r = string_field_or(o, "replacement", "\xE2\x96\x81");
    if (r.empty()) throw classify::ClassifyError(what + ": empty replacement");
    return std::make_unique<Metaspace>(r, prepend_scheme(o), bool_field_or(o, "split", true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const auto& v : array_field(o, "pretokenizers", what))
      if (auto p = make_pre_tokenizer(v)) parts.push_back(std::move(p));
    return std::make_unique<Sequence>(std::move(parts));
  }
  throw classify::ClassifyError("unsupported pre_tokenizer type '" + type + "'");
}

}  // namespace mcpclass::tokenizers::hf
