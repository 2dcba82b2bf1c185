// Internal: the route proxy's content keys (the semantic cache's exact key and scope, a
// conversation's derived key). SHA-256, so that a client cannot craft a text whose key collides
// with another client's (a 64-bit checksum such as FNV-1a can be collided in under a second).
// Thread-safety: a pure function.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace mcpclass::route {

/// The SHA-256 of `parts`, each preceded by its length (so that no two lists of parts share an
/// input), as 64 lowercase hex digits.
std::string content_key(std::initializer_list<std::string_view> parts);

}  // namespace mcpclass::route
