// GPT-2's byte-to-character table: byte-level BPE spells every byte as a printable character.
#pragma once

#include <array>
#include <string>

namespace mcpclass::tokenizers::hf {

/// The UTF-8 spelling of the character each byte maps to.
const std::array<std::string, 256>& byte_level_chars();
/// What the space byte maps to ("Ġ", U+0120).
constexpr char32_t kByteLevelSpace = 0x120;

}  // namespace mcpclass::tokenizers::hf
