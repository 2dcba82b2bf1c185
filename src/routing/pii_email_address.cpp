// EMAIL_ADDRESS: every '@' is tried once; the local part is read leftwards and the domain
// rightwards, each stopping at the first byte that cannot belong to it, and neither crosses an
// '@', so the reads of two '@' share at most the bytes between them.
#include "mcpclass/routing/pii_recognizers.hpp"
#include "routing/pii_scanners.hpp"
#include "routing/pii_text.hpp"

#include <string>

namespace mcpclass::routing::detail {

namespace {

constexpr std::size_t kMaxLocal = 64;
constexpr std::size_t kMaxDomain = 253;
constexpr std::size_t kMaxLabel = 63;

// RFC 5321 atext without the characters that delimit words in prose and key=value text.
bool local_punctuation(char c) {
  return std::string_view("!#$%&'*+-?^~_").find(c) != std::string_view::npos;
}

bool local_char(char c) {
  return is_ascii_alnum(c) || c == '.' || local_punctuation(c);
}

// The start of the local part that ends at `at`, or `at` when there is none.
std::size_t local_start(std::string_view text, std::size_t at) {
  std::size_t k = at;
  while (k > 0) {
    if (local_char(text[k - 1])) {
      --k;
    } else if (const auto n = letter_before(text, k); n != 0) {
      k -= n;
    } else {
      break;
    }
  }
  // Leading dots and punctuation are the prose's ("'bob@...", "...bob@"), not the address's.
  while (k < at && (text[k] == '.' || (local_punctuation(text[k]) && text[k] != '_'))) ++k;
  return k;
}

bool valid_local(std::string_view local) {
  return !local.empty() && local.size() <= kMaxLocal && local.back() != '.' &&
         local.find("..") == std::string_view::npos;
}

// The end of the domain that starts at `begin`, or `begin` when it is not a domain of two or
// more labels ending in a label of two or more letters.
std::size_t domain_end(std::string_view text, std::size_t begin) {
  std::size_t p = begin;
  std::size_t labels = 0;
  std::size_t last_label = begin;
  while (true) {
    const std::size_t label = p;
    while (p < text.size() && (is_ascii_alnum(text[p]) || text[p] == '-')) ++p;
    const std::size_t len = p - label;
    if (len == 0 || len > kMaxLabel || text[label] == '-' || text[p - 1] == '-') return begin;
    ++labels;
    last_label = label;
    if (p + 1 < text.size() && text[p] == '.' && is_ascii_alnum(text[p + 1])) {
      ++p;
      continue;
    }
    break;
  }
  if (labels < 2 || p - begin > kMaxDomain || p - last_label < 2) return begin;
  for (std::size_t i = last_label; i < p; ++i) {
    if (!is_ascii_alpha(text[i])) return begin;
  }
  return p;
}

}  // namespace

void scan_email_addresses(std::string_view text, std::vector<PiiMatch>& out) {
  for (std::size_t at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    const std::size_t begin = local_start(text, at);
    if (!valid_local(text.substr(begin, at - begin))) continue;
    const std::size_t end = domain_end(text, at + 1);
    if (end == at + 1 || word_char_at(text, end) || (end < text.size() && text[end] == '@')) {
      continue;
    }
    out.push_back(PiiMatch{std::string(pii_type::email_address), begin, end, 1.0});
    at = end - 1;
  }
}

}  // namespace mcpclass::routing::detail
