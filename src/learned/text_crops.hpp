// Internal: short views of a long labelled text for training augmentation. Exam questions are
// long; router queries are short: training on crops of the questions too (same label) teaches a
// head what a short query about the same subject looks like.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

/// The text's last sentence (when it has at least 3 words and is not the whole text) and, for
/// texts over 12 words, one random window of 4–12 consecutive words drawn from `rng`.
std::vector<std::string> text_crops(const std::string& text, std::mt19937_64& rng);

}  // namespace mcpclass::learned::detail
