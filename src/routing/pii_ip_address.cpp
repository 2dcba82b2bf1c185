// IP_ADDRESS: IPv4 is read from each digit that starts a token (at most 15 bytes on); IPv6 from
// each start of a run of hex digits, colons and dots, which is read once to its end.
#include "mcpclass/routing/pii_recognizers.hpp"
#include "routing/pii_scanners.hpp"
#include "routing/pii_text.hpp"

#include <algorithm>
#include <string>

namespace mcpclass::routing::detail {

namespace {

constexpr std::size_t kMaxIpv6 = 45;  // "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"

// The end of a dotted IPv4 address that starts at `p` and ends at or before `limit`, or `p`.
// Octets are 0-255 written without leading zeros.
std::size_t ipv4_end(std::string_view text, std::size_t p, std::size_t limit) {
  const std::size_t begin = p;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (p >= limit || text[p] != '.') return begin;
      ++p;
    }
    const std::size_t start = p;
    unsigned value = 0;
    while (p < limit && is_digit(text[p]) && p - start < 4) value = value * 10 + (text[p++] - '0');
    const std::size_t len = p - start;
    if (len == 0 || len > 3 || value > 255 || (len > 1 && text[start] == '0')) return begin;
  }
  return p;
}

// `s` is a whole IPv6 address: eight groups of 1-4 hex digits, or fewer around one "::", the
// last two groups possibly written as IPv4.
bool valid_ipv6(std::string_view s) {
  const std::size_t gap = s.find("::");
  if (gap != std::string_view::npos && s.find("::", gap + 1) != std::string_view::npos) {
    return false;
  }
  int groups = 0;
  bool ipv4_seen = false;
  // Counts the groups of one side of the gap; false when a side is malformed.
  const auto side = [&](std::string_view part) {
    if (part.empty()) return true;
    std::size_t p = 0;
    while (true) {
      if (ipv4_seen) return false;  // an IPv4 part is the last
      std::size_t q = p;
      while (q < part.size() && is_hex(part[q])) ++q;
      if (q < part.size() && part[q] == '.') {
        if (ipv4_end(part, p, part.size()) != part.size()) return false;
        ipv4_seen = true;
        groups += 2;
        return true;
      }
      if (q == p || q - p > 4) return false;
      ++groups;
      if (q == part.size()) return true;
      if (part[q] != ':') return false;
      p = q + 1;
    }
  };
  if (gap == std::string_view::npos) return side(s) && groups == 8;
  if (!side(s.substr(0, gap))) return false;
  if (ipv4_seen) return false;  // IPv4 only as the last 32 bits
  return side(s.substr(gap + 2)) && groups >= 1 && groups <= 7;
}

bool ipv6_run_char(char c) {
  return is_hex(c) || c == ':' || c == '.';
}

void scan_ipv4(std::string_view text, std::vector<PiiMatch>& out) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_digit(text[i]) || word_char_before(text, i) || (i > 0 && text[i - 1] == '.')) continue;
    const std::size_t end = ipv4_end(text, i, std::min(text.size(), i + 15));
    if (end == i) continue;
    const bool longer = end + 1 < text.size() && text[end] == '.' && is_digit(text[end + 1]);
    if (word_char_at(text, end) || longer) continue;
    out.push_back(PiiMatch{std::string(pii_type::ip_address), i, end, 1.0});
    i = end - 1;
  }
}

void scan_ipv6(std::string_view text, std::vector<PiiMatch>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (!(is_hex(c) || c == ':') || word_char_before(text, i) ||
        (i > 0 && (text[i - 1] == ':' || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && ipv6_run_char(text[end])) ++end;
    const std::size_t run_end = end;
    // A sentence's full stop, or a colon after the address ("at ::1: refused").
    while (end > i && text[end - 1] == '.') --end;
    if (end - i > 2 && text[end - 1] == ':' && text[end - 2] != ':') --end;
    const std::string_view run = text.substr(i, end - i);
    if (end - i <= kMaxIpv6 && !word_char_at(text, run_end) && run.find(':') != run.rfind(':') &&
        valid_ipv6(run)) {
      out.push_back(PiiMatch{std::string(pii_type::ip_address), i, end, 1.0});
    }
    i = run_end;
  }
}

}  // namespace

void scan_ip_addresses(std::string_view text, std::vector<PiiMatch>& out) {
  scan_ipv4(text, out);
  scan_ipv6(text, out);
}

}  // namespace mcpclass::routing::detail
