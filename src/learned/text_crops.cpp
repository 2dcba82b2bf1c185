#include "learned/text_crops.hpp"

#include <sstream>

namespace mcpclass::learned::detail {

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string join(const std::vector<std::string>& w, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) out += (i == from ? "" : " ") + w[i];
  return out;
}

}  // namespace

std::vector<std::string> text_crops(const std::string& text, std::mt19937_64& rng) {
  const auto w = words(text);
  std::vector<std::string> out;
  // Last sentence: the words after the last word (other than the final one) ending in . ? !
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    const char end = w[i].back();
    if (end == '.' || end == '?' || end == '!') start = i + 1;
  }
  if (start > 0 && w.size() - start >= 3) out.push_back(join(w, start, w.size()));
  if (w.size() > 12) {
    const auto n = std::uniform_int_distribution<std::size_t>(4, 12)(rng);
    const auto from = std::uniform_int_distribution<std::size_t>(0, w.size() - n)(rng);
    out.push_back(join(w, from, from + n));
  }
  return out;
}

}  // namespace mcpclass::learned::detail
