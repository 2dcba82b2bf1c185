#include "architectures/common/rope_config.hpp"

#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

namespace mcpclass::architectures {

namespace json = boost::json;

const json::object* config_object(const json::object& c, const std::string& file, const char* key) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) return nullptr;
  if (!v->is_object()) checkpoint::config_error(file, std::string(key) + " must be an object");
  return &v->as_object();
}

kernels::RopeSettings read_rope(const json::object& p, const std::string& file,
                                const std::string& where, kernels::RopeSettings base,
                                std::size_t max_positions) {
  const std::string prefix = where + ".";
  auto key = [&](const char* k) { return prefix + k; };
  if (p.contains("rope_theta"))
    base.theta = checkpoint::config_number(p, file, "rope_theta", 1.0, 1e12, base.theta);
  std::string type = "default";
  if (p.contains("rope_type"))
    type = checkpoint::config_string(p, file, "rope_type", "default");
  else if (p.contains("type"))  // the older name of the key
    type = checkpoint::config_string(p, file, "type", "default");
  constexpr double kHuge = 1e9;
  if (type == "default") {
    base.type = kernels::RopeSettings::Type::plain;
    return base;
  }
  if (type == "linear") {
    base.type = kernels::RopeSettings::Type::linear;
    base.factor = checkpoint::config_number(p, file, "factor", 1e-9, kHuge, 1.0);
    return base;
  }
  if (type != "yarn")
    checkpoint::config_error(
        file, key("rope_type") + " '" + type + "' is not supported (default, linear, yarn)");
  base.type = kernels::RopeSettings::Type::yarn;
  base.original_max_positions = checkpoint::config_number(
      p, file, "original_max_position_embeddings", 0.0, kHuge, static_cast<double>(max_positions));
  const double implied = static_cast<double>(max_positions) / base.original_max_positions;
  base.factor = checkpoint::config_number(p, file, "factor", 0.0, kHuge, implied);
  base.attention_factor = checkpoint::config_number(p, file, "attention_factor", 0.0, kHuge, -1.0);
  base.mscale = checkpoint::config_number(p, file, "mscale", 0.0, kHuge, 0.0);
  base.mscale_all_dim = checkpoint::config_number(p, file, "mscale_all_dim", 0.0, kHuge, 0.0);
  base.beta_fast = checkpoint::config_number(p, file, "beta_fast", 0.0, kHuge, 32.0);
  base.beta_slow = checkpoint::config_number(p, file, "beta_slow", 0.0, kHuge, 1.0);
  base.truncate = checkpoint::config_flag(p, file, "truncate", true);
  return base;
}

bool read_layer_type_ropes(const json::object& c, const std::string& file,
                           std::size_t max_positions, kernels::RopeSettings& full,
                           kernels::RopeSettings& sliding) {
  const auto* params = config_object(c, file, "rope_parameters");
  if (params == nullptr) return false;
  if (const auto* f = config_object(*params, file, "full_attention"))
    full = read_rope(*f, file, "rope_parameters.full_attention", full, max_positions);
  if (const auto* s = config_object(*params, file, "sliding_attention"))
    sliding = read_rope(*s, file, "rope_parameters.sliding_attention", sliding, max_positions);
  return true;
}

std::optional<std::vector<bool>> read_sliding_layers(const json::object& c, const std::string& file,
                                                     std::size_t layers) {
  const auto* types = c.if_contains("layer_types");
  if (types == nullptr || types->is_null()) return std::nullopt;
  if (!types->is_array() || types->as_array().size() != layers)
    checkpoint::config_error(
        file, "layer_types must list " + std::to_string(layers) + " layers (num_hidden_layers)");
  std::vector<bool> out;
  for (const auto& t : types->as_array()) {
    const auto* name = t.if_string();
    if (name == nullptr || (*name != "full_attention" && *name != "sliding_attention"))
      checkpoint::config_error(file,
                               "layer_types may hold only full_attention and sliding_attention");
    out.push_back(*name == "sliding_attention");
  }
  return out;
}

}  // namespace mcpclass::architectures
