#include "architectures/common/encoder_rows.hpp"

#include "mcpclass/classify/errors.hpp"

#include <string>

namespace mcpclass::architectures {

void check_text_length(std::size_t tokens, std::size_t max_tokens) {
  if (tokens == 0 || tokens > max_tokens)
    throw classify::ClassifyError("a text of " + std::to_string(tokens) +
                                  " tokens is outside [1, " + std::to_string(max_tokens) + "]");
}

void check_token_id(std::int32_t id, std::size_t vocab) {
  if (id < 0 || static_cast<std::size_t>(id) >= vocab)
    throw classify::ClassifyError("token id " + std::to_string(id) + " is outside the model's " +
                                  std::to_string(vocab) + "-token vocabulary");
}

void check_token_type(std::size_t type, std::size_t types) {
  if (type >= types)
    throw classify::ClassifyError("token type " + std::to_string(type) +
                                  " is outside the model's " + std::to_string(types) + " types");
}

}  // namespace mcpclass::architectures
