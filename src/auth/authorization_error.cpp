#include "mcpclass/auth/oauth.hpp"

#include <fmt/format.h>

namespace mcpclass::auth {

namespace {

std::string describe(const std::string& step, int status, const std::string& error,
                     const std::string& description) {
  std::string out = "authorization failed at " + step;
  if (status != 0) out += fmt::format(" (HTTP {})", status);
  if (!error.empty()) out += ": " + error;
  if (!description.empty()) out += (error.empty() ? ": " : " - ") + description;
  return out;
}

}  // namespace

AuthorizationError::AuthorizationError(std::string step, int status, std::string error,
                                       std::string description)
    : client::TransportError(describe(step, status, error, description)),
      step_(std::move(step)),
      status_(status),
      error_(std::move(error)),
      description_(std::move(description)) {}

}  // namespace mcpclass::auth
