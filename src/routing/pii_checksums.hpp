// Internal: the checks that tell a number from a look-alike: Luhn (payment cards), the IBAN
// registry's lengths and mod-97, the SSA's never-issued social security numbers.
#pragma once

#include <cstddef>
#include <string_view>

namespace mcpclass::routing::detail {

/// `digits` (ASCII digits only) passes the Luhn check.
bool luhn_valid(std::string_view digits);

/// The IBAN length the SWIFT registry gives for a country code ("DE": 22), 0 for none.
std::size_t iban_length(std::string_view country);
/// `iban` (compact: upper-case letters and digits) has check digits 02-98 and passes mod-97.
bool iban_checksum_valid(std::string_view iban);

/// An SSN's area (3 digits), group (2) and serial (4) could have been issued.
bool ssn_issuable(std::string_view area, std::string_view group, std::string_view serial);

}  // namespace mcpclass::routing::detail
