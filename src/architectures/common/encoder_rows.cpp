#include "architectures/common/encoder_rows.hpp"

#include "mcpclass/classify/errors.hpp"

#include <charconv>
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

std::optional<LayerModule> layer_module(std::string_view module, std::string_view layers,
                                        std::size_t count) {
  if (!module.starts_with(layers)) return std::nullopt;
  std::string_view rest = module.substr(layers.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::size_t layer = 0;
  const auto [end, err] = std::from_chars(rest.data(), rest.data() + dot, layer);
  if (err != std::errc() || end != rest.data() + dot || layer >= count) return std::nullopt;
  return LayerModule{layer, rest.substr(dot + 1)};
}

std::optional<ModuleSlot> post_norm_slot(const LayerModule& m, std::size_t h,
                                         std::size_t intermediate, std::string_view query,
                                         std::string_view key, std::string_view value) {
  const auto projection = [&](std::string_view name) {
    return m.rest.starts_with("attention.self.") && m.rest.substr(15) == name;
  };
  if (projection(query)) return ModuleSlot{m.layer, kAttentionIn, 0, h, h};
  if (projection(key)) return ModuleSlot{m.layer, kAttentionIn, h, h, h};
  if (projection(value)) return ModuleSlot{m.layer, kAttentionIn, 2 * h, h, h};
  if (m.rest == "attention.output.dense") return ModuleSlot{m.layer, kAttentionOut, 0, h, h};
  if (m.rest == "intermediate.dense")
    return ModuleSlot{m.layer, kFeedForwardIn, 0, h, intermediate};
  if (m.rest == "output.dense") return ModuleSlot{m.layer, kFeedForwardOut, 0, intermediate, h};
  return std::nullopt;
}

}  // namespace mcpclass::architectures
