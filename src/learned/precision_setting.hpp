// Internal: the `precision` key every native model's settings share (LearnedSettings,
// TokenClassifierSettings), read one way.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"
#include "util/config_reader.hpp"

namespace mcpclass::learned::detail {

/// `precision` of `r`'s object when present (a ConfigError naming the key for an unknown name),
/// else `fallback`.
EncoderPrecision read_precision(util::strict::ObjectReader& r, EncoderPrecision fallback);

}  // namespace mcpclass::learned::detail
