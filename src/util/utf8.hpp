// Internal: reading UTF-8 one character at a time, strictly (no overlong forms, surrogates or
// values past U+10FFFF), for the checks and excerpts that must not pass or cut a broken text.
// Thread-safety: pure.
#pragma once

#include <cstddef>
#include <string_view>

namespace mcpclass::util {

/// The byte length of the valid UTF-8 character that starts `s`, or 0 when `s` is empty or its
/// first bytes begin none.
std::size_t utf8_character_length(std::string_view s);

}  // namespace mcpclass::util
