// `${ENV}` expansion for configured header values.
#include "mcpclass/transport/client/http.hpp"

#include <cstdlib>
#include <stdexcept>

namespace mcpclass::transport::client {

std::string expand_env(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (text[i + 1] != '{') {
      out += '$';
      continue;
    }
    const auto close = text.find('}', i + 2);
    if (close == std::string_view::npos)
      throw std::invalid_argument("unterminated ${ in '" + std::string(text) + "'");
    const std::string name(text.substr(i + 2, close - i - 2));
    if (const char* value = std::getenv(name.c_str())) out += value;
    i = close;
  }
  return out;
}

}  // namespace mcpclass::transport::client
