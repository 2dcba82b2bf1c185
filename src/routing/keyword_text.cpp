#include "routing/keyword_text.hpp"

namespace mcpclass::routing::detail {

std::string fold_case(std::string_view text, bool fold) {
  std::string out(text);
  if (fold)
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace mcpclass::routing::detail
