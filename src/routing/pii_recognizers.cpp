#include "mcpclass/routing/pii_recognizers.hpp"

#include "mcpclass/util/config_error.hpp"
#include "routing/pii_scanners.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

namespace mcpclass::routing {

namespace {

constexpr std::array<std::string_view, 6> kKnownTypes{
    pii_type::email_address, pii_type::phone_number, pii_type::credit_card,
    pii_type::us_ssn,        pii_type::iban_code,    pii_type::ip_address,
};

std::size_t type_index(std::string_view type) {
  return static_cast<std::size_t>(std::find(kKnownTypes.begin(), kKnownTypes.end(), type) -
                                  kKnownTypes.begin());
}

}  // namespace

PiiRecognizers::PiiRecognizers() : enabled_((1u << kKnownTypes.size()) - 1) {}

PiiRecognizers::PiiRecognizers(std::span<const std::string> types) {
  for (const auto& type : types) {
    const std::size_t i = type_index(type);
    if (i == kKnownTypes.size()) {
      throw util::ConfigError(
          fmt::format("unknown PII type '{}' (the built-in recognizers know {})", type,
                      fmt::join(kKnownTypes, ", ")));
    }
    enabled_ |= 1u << i;
  }
}

std::span<const std::string_view> PiiRecognizers::known_types() {
  return kKnownTypes;
}

bool PiiRecognizers::is_known_type(std::string_view type) {
  return type_index(type) < kKnownTypes.size();
}

std::vector<PiiMatch> PiiRecognizers::find(std::string_view text) const {
  std::vector<PiiMatch> candidates;
  // Every type is scanned whatever was asked for, so that the text a card number takes is never
  // reported as a phone number when only phones are wanted.
  detail::scan_ibans(text, candidates);
  detail::scan_email_addresses(text, candidates);
  detail::scan_ip_addresses(text, candidates);
  detail::scan_digit_groups(text, candidates);
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<PiiMatch> found;
  std::size_t taken_until = 0;
  for (auto& c : candidates) {
    if (c.begin < taken_until) continue;
    taken_until = c.end;
    if ((enabled_ >> type_index(c.type)) & 1u) found.push_back(std::move(c));
  }
  return found;
}

}  // namespace mcpclass::routing
