#include "mcpclass/protocol/version.hpp"

#include <algorithm>

namespace mcpclass::protocol {

bool is_handshake_version(std::string_view v) {
  return std::find(kHandshakeVersions.begin(), kHandshakeVersions.end(), v) !=
         kHandshakeVersions.end();
}

bool is_supported_version(std::string_view v) {
  return std::find(kAllVersions.begin(), kAllVersions.end(), v) != kAllVersions.end();
}

std::string_view negotiate(std::string_view requested) {
  if (is_handshake_version(requested)) return requested;
  if (requested == k2026_07_28) return kHandshakeVersions.front();
  return kFallbackVersion;
}

bool batches_allowed(std::string_view version) {
  return version == k2025_03_26;
}

}  // namespace mcpclass::protocol
