#include "tokenizers/hf/decoders.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/byte_level.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

#include <map>

namespace mcpclass::tokenizers::hf {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// tokenizers' decoders::wordpiece::cleanup, in its order.
void cleanup(std::string& s) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
}

// String::from_utf8_lossy: each byte that starts no valid sequence becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    const std::size_t n = b < 0x80         ? 1
                          : (b >> 5) == 6  ? 2
                          : (b >> 4) == 14 ? 3
                          : (b >> 3) == 30 ? 4
                                           : 0;
    bool valid = n != 0 && i + n <= bytes.size();
    for (std::size_t k = 1; valid && k < n; ++k)
      valid = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    if (valid) {
      try {
        require_utf8(bytes.substr(i, n));  // overlong forms and surrogates too
      } catch (const classify::ClassifyError&) {
        valid = false;
      }
    }
    if (valid) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      append_utf8(out, 0xFFFD);
      ++i;
    }
  }
  return out;
}

}  // namespace

TokenDecoder::TokenDecoder(const boost::json::value& decoder) {
  if (decoder.is_null()) return;
  const auto& o = as_object(decoder, "decoder");
  const auto type = string_field(o, "type", "decoder");
  if (type == "WordPiece") {
    kind_ = Kind::wordpiece;
    prefix_ = string_field_or(o, "prefix", "##");
    cleanup_ = bool_field_or(o, "cleanup", true);
  } else if (type == "ByteLevel") {
    kind_ = Kind::byte_level;
  } else {
    throw classify::ClassifyError("decoder '" + type +
                                  "' is not supported for token spans (WordPiece, ByteLevel)");
  }
}

std::string TokenDecoder::decode(std::span<const std::string> tokens) const {
  std::string out;
  switch (kind_) {
    case Kind::join:
      for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
      return out;
    case Kind::wordpiece:
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string t = tokens[i];
        if (i != 0) t = t.starts_with(prefix_) ? t.substr(prefix_.size()) : " " + t;
        if (cleanup_) cleanup(t);
        out += t;
      }
      return out;
    case Kind::byte_level: {
      static const auto* bytes_of = [] {
        auto* m = new std::map<std::string, char, std::less<>>();
        const auto& chars = byte_level_chars();
        for (std::size_t b = 0; b < chars.size(); ++b) (*m)[chars[b]] = static_cast<char>(b);
        return m;
      }();
      std::string raw;
      for (const auto& t : tokens) {
        // A token with a character outside the byte alphabet (an added token) stays as written.
        std::string bytes;
        bool mapped = true;
        for (std::size_t i = 0, len = 0; mapped && i < t.size(); i += len) {
          decode_utf8(t, i, len);
          const auto it = bytes_of->find(std::string_view(t).substr(i, len));
          mapped = it != bytes_of->end();
          if (mapped) bytes.push_back(it->second);
        }
        raw += mapped ? bytes : t;
      }
      return utf8_lossy(raw);
    }
  }
  return out;
}

}  // namespace mcpclass::tokenizers::hf
