// The built-in PII recognizers: checked patterns that find personal data with no model (e-mail
// addresses, phone numbers, credit cards, US social security numbers, IBANs, IP addresses), and
// the redaction that replaces what any PII source found.
#pragma once

#include "mcpclass/routing/pii_match.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing {

/// Presidio's entity names of the types the built-in recognizers find.
namespace pii_type {
inline constexpr std::string_view email_address = "EMAIL_ADDRESS";
inline constexpr std::string_view phone_number = "PHONE_NUMBER";
inline constexpr std::string_view credit_card = "CREDIT_CARD";
inline constexpr std::string_view us_ssn = "US_SSN";
inline constexpr std::string_view iban_code = "IBAN_CODE";
inline constexpr std::string_view ip_address = "IP_ADDRESS";
}  // namespace pii_type

/// Finds PII spans in a text with hand-written scanners, each candidate validated:
/// - EMAIL_ADDRESS: an RFC 5321 dot-atom local part (ASCII atext, except `= / | { } `` which in
///   prose and key=value text delimit words, plus Latin, Greek and Cyrillic letters), an ASCII
///   domain of two or more labels whose last is two or more letters; not inside a longer word.
/// - PHONE_NUMBER: E.164 (`+`, 8-15 digits, separators, a `(0)` trunk), `00` international
///   prefix, North American (`(415) 555-2671`, `415-555-2671`, `415.555.2671`, `1-800-...`; area
///   code 2-9) and national numbers with a trunk 0 written in groups (`020 7946 0958`,
///   `030 123456`, `01 23 45 67 89`, `03-1234-5678`). Bare digit runs without `+` are not phones.
/// - CREDIT_CARD: 13-19 digits, bare or in groups of 3-6 split by one kind of separator (space or
///   dash), first digit 2-6 (the issuers' IIN ranges), Luhn checksum.
/// - US_SSN: `AAA-GG-SSSS` or with spaces; area not 000, 666 or 900-999, group not 00, serial
///   not 0000, nor the voided 078-05-1120 and 219-09-9999.
/// - IBAN_CODE: a country's registered length (compact or in groups of four), check digits 02-98,
///   mod-97 checksum; upper case, as ISO 13616 prints it.
/// - IP_ADDRESS: dotted IPv4 with octets <= 255 and no leading zeros (not a part of a longer
///   dotted run such as a five-part version), IPv6 with `::` and an embedded IPv4.
/// A digit sequence is a number only as a whole: digits, letters or a `-`/`.` glued to either end
/// (`ID4111...`, `12-4111...`) make it a part of another token. Where candidates overlap the
/// earliest, then the longest wins, whatever types were asked for (a card number is not a phone
/// number even when only phones are wanted).
///
/// Any byte string is valid input (invalid UTF-8 is read as bytes); time is linear in the text
/// and memory at most linear. No I/O.
///
/// Thread-safety: immutable after construction; find() may be called concurrently.
class PiiRecognizers {
 public:
  /// Every type above.
  PiiRecognizers();
  /// Only `types` (Presidio names). Throws util::ConfigError naming an unknown type.
  explicit PiiRecognizers(std::span<const std::string> types);

  /// The spans of the types asked for, sorted by position and non-overlapping; score 1.
  std::vector<PiiMatch> find(std::string_view text) const;

  /// The names of every type the recognizers know, in a fixed order.
  static std::span<const std::string_view> known_types();
  static bool is_known_type(std::string_view type);

 private:
  unsigned enabled_ = 0;  // bit i set: known_types()[i] is reported
};

/// `matches` in text order, overlapping ones merged into one span over both (the first's type,
/// the higher score), each cut to the text's `text_size` bytes; empty or reversed ones, and ones
/// that begin past the text, dropped. Whatever order a source reports its spans in.
std::vector<PiiMatch> merged_spans(std::span<const PiiMatch> matches, std::size_t text_size);

/// `text` with each span of merged_spans(matches) replaced by `[TYPE]` ("[EMAIL_ADDRESS]"): every
/// byte any match covers is redacted, in whatever order the matches come.
std::string redact(std::string_view text, std::span<const PiiMatch> matches);

}  // namespace mcpclass::routing
