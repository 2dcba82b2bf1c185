// UTF-8 decoding and the Unicode predicates the tokenizer.json components use, matching the
// definitions of the reference library (Rust `char` methods, `unicode_categories`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mcpclass::tokenizers::hf {

/// Decodes the code point at `s[i]`; sets `len` to its byte length. `s` must be valid UTF-8
/// (checked once at the tokenizer's entry with require_utf8).
char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len);
/// Appends the UTF-8 bytes of `c` to `out`.
void append_utf8(std::string& out, char32_t c);
std::size_t utf8_length(char32_t c);
/// Throws ClassifyError naming the byte offset of the first invalid sequence.
void require_utf8(std::string_view s);

/// Rust `char::is_whitespace` (the White_Space property).
bool is_white_space(char32_t c);
/// BERT's whitespace: White_Space plus \t \n \r.
bool is_bert_whitespace(char32_t c);
/// unicode_categories `is_other` as the reference uses it (Cc, Cf, Co, Cs; not Cn) less \t \n \r.
bool is_bert_control(char32_t c);
/// unicode_categories `is_punctuation` (Pc Pd Ps Pe Pi Pf Po) or ASCII punctuation, as BERT.
bool is_bert_punctuation(char32_t c);
/// The Unicode general category Pc..Po.
bool is_punctuation_category(char32_t c);
bool is_chinese_char(char32_t c);
/// Nonspacing mark (Mn).
bool is_mark_nonspacing(char32_t c);
/// Any mark (Mn, Mc, Me): unicode-normalization's `is_combining_mark`.
bool is_combining_mark(char32_t c);
/// Rust `char::is_alphanumeric` (Alphabetic or Numeric: L*, Nl, Nd, No and Other_Alphabetic).
bool is_alphanumeric(char32_t c);
/// Rust `char::is_numeric` (Nd, Nl, No).
bool is_numeric(char32_t c);
/// Unicode canonical combining class.
int combining_class(char32_t c);

}  // namespace mcpclass::tokenizers::hf
