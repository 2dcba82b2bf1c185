// Internal: the scanners of the built-in PII recognizers. Each appends the validated candidates
// of its types to `out` (PiiRecognizers::find sorts them and settles overlaps), in time linear in
// the text: a scan reads each byte a bounded number of times.
#pragma once

#include "mcpclass/routing/pii_match.hpp"

#include <string_view>
#include <vector>

namespace mcpclass::routing::detail {

/// EMAIL_ADDRESS.
void scan_email_addresses(std::string_view text, std::vector<PiiMatch>& out);
/// IP_ADDRESS, IPv4 and IPv6.
void scan_ip_addresses(std::string_view text, std::vector<PiiMatch>& out);
/// IBAN_CODE.
void scan_ibans(std::string_view text, std::vector<PiiMatch>& out);
/// CREDIT_CARD, US_SSN and PHONE_NUMBER: the three types written as digits in groups.
void scan_digit_groups(std::string_view text, std::vector<PiiMatch>& out);

}  // namespace mcpclass::routing::detail
