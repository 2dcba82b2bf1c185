// A span of personal data found in a text: what every PII source (the built-in recognizers, a
// token-classification model, a remote classifier) reports, and what a redaction replaces.
// Thread-safety: a plain value.
#pragma once

#include <cstddef>
#include <string>

namespace mcpclass::routing {

/// One PII span. `type` uses Presidio's entity names, as the Semantic Router's PII models and
/// policies do (EMAIL_ADDRESS, PHONE_NUMBER, CREDIT_CARD, US_SSN, IBAN_CODE, IP_ADDRESS, ...).
struct PiiMatch {
  std::string type;
  std::size_t begin = 0;  ///< UTF-8 byte offset of the first byte in the text
  std::size_t end = 0;    ///< UTF-8 byte offset one past the last byte
  double score = 1.0;     ///< confidence in [0, 1]; 1 for a checked recognizer match
};

}  // namespace mcpclass::routing
