#include "checkpoint/lora_adapter.hpp"

#include "checkpoint/checkpoint_config.hpp"
#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/regex.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace mcpclass::checkpoint {

namespace json = boost::json;

namespace {

// get_peft_model_state_dict keeps the PeftModel's own prefix on every key.
constexpr std::string_view kPrefix = "base_model.model.";
// Far above any published rank; bounds what a hostile config could make us expect.
constexpr std::int64_t kMaxRank = 65536;

[[noreturn]] void bad(const std::string& file, const std::string& why) {
  throw classify::ClassifyError("'" + file + "' " + why);
}

// The parts of adapter_config.json that decide the merge.
struct LoraConfig {
  std::string file;
  std::int64_t r = 0;
  double scaling = 0.0;
  std::string bias = "none";
  bool all_linear = false;  ///< target_modules "all-linear": every module PEFT could target.
  std::vector<std::string> target_list;
  std::unique_ptr<tokenizers::hf::Regex>
      target_regex;  ///< target_modules as a string: re.fullmatch.
  std::vector<std::string> modules_to_save;
};

bool truthy(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && !v->is_null() && !(v->is_bool() && !v->as_bool());
}

bool non_empty(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return false;
  if (const auto* m = v->if_object()) return !m->empty();
  if (const auto* a = v->if_array()) return !a->empty();
  return true;
}

std::vector<std::string> string_list(const json::object& o, std::string_view key,
                                     const std::string& file) {
  std::vector<std::string> out;
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return out;
  const auto* a = v->if_array();
  if (a == nullptr) bad(file, std::string(key) + " must be a list of module names or null");
  for (const auto& item : *a) {
    const auto* s = item.if_string();
    if (s == nullptr || s->empty())
      bad(file, std::string(key) + " must hold non-empty module names");
    out.emplace_back(*s);
  }
  return out;
}

LoraConfig read_config(const std::string& dir) {
  LoraConfig c;
  c.file = (std::filesystem::path(dir) / "adapter_config.json").string();
  const auto o = read_json_object_file(c.file, "a PEFT adapter directory has one");
  const auto* type = o.if_contains("peft_type");
  if (type == nullptr || !type->is_string())
    bad(c.file, "has no peft_type (a PEFT adapter_config.json names one)");
  if (type->as_string() != "LORA")
    bad(c.file, "peft_type '" + std::string(type->as_string()) +
                    "' is not supported (mcpclass merges LORA adapters only)");
  // Options that change the arithmetic beyond W += scaling·B·A: refused rather than ignored.
  for (const char* key : {"use_dora", "lora_bias", "fan_in_fan_out"})
    if (truthy(o, key))
      bad(c.file, std::string(key) + " is not supported (" +
                      (std::string_view(key) == "fan_in_fan_out"
                           ? "it is for Conv1D weights stored in × out; PEFT saves false for the "
                             "nn.Linear layers of these architectures"
                           : "mcpclass merges plain LoRA") +
                      ")");
  for (const char* key :
       {"rank_pattern", "alpha_pattern", "trainable_token_indices", "layer_replication"})
    if (non_empty(o, key))
      bad(c.file, std::string(key) +
                      " is not supported (mcpclass merges one r and lora_alpha "
                      "for every module)");
  const auto* r = o.if_contains("r");
  if (r == nullptr || !r->is_int64() || r->as_int64() < 1 || r->as_int64() > kMaxRank)
    bad(c.file, "r must be an integer in [1, 65536]");
  c.r = r->as_int64();
  double alpha = 8.0;  // LoraConfig's default
  if (const auto* a = o.if_contains("lora_alpha")) {
    if (!a->is_number() || !std::isfinite(a->to_number<double>()))
      bad(c.file, "lora_alpha must be a number");
    alpha = a->to_number<double>();
  }
  const bool rslora = truthy(o, "use_rslora");
  c.scaling = alpha / (rslora ? std::sqrt(static_cast<double>(c.r)) : static_cast<double>(c.r));
  if (const auto* b = o.if_contains("bias"); b != nullptr && !b->is_null()) {
    const auto* s = b->if_string();
    if (s == nullptr || (*s != "none" && *s != "all" && *s != "lora_only"))
      bad(c.file, "bias must be none, all or lora_only");
    c.bias = std::string(*s);
  }
  if (const auto* t = o.if_contains("target_modules"); t != nullptr && t->is_string()) {
    const std::string pattern(t->as_string());
    if (pattern == "all-linear") {
      c.all_linear = true;
    } else {
      try {
        c.target_regex = std::make_unique<tokenizers::hf::Regex>("\\A(?:" + pattern + ")\\z");
      } catch (const classify::ClassifyError& e) {
        bad(c.file, std::string("target_modules is not a valid regular expression: ") + e.what());
      }
    }
  } else {
    c.target_list = string_list(o, "target_modules", c.file);
  }
  c.modules_to_save = string_list(o, "modules_to_save", c.file);
  return c;
}

// PEFT's check_target_module_exists for a list: the name or its last dotted parts.
bool names_module(const std::vector<std::string>& names, const std::string& module) {
  for (const auto& n : names)
    if (module == n || (module.size() > n.size() && module.ends_with(n) &&
                        module[module.size() - n.size() - 1] == '.'))
      return true;
  return false;
}

bool targeted(const LoraConfig& c, const std::string& module) {
  if (c.all_linear) return true;
  if (c.target_regex) {
    const auto found = c.target_regex->find_all(module);
    return !found.empty() && found.front().first == 0 && found.front().second == module.size();
  }
  return names_module(c.target_list, module);
}

// One adapted module: its two factors, as tensor names in the adapter file.
struct Factors {
  std::string a, b;
  bool embedding = false;
};

// Splits `name` (prefix removed) into its module and LoRA factor; false for a full tensor.
bool lora_factor(const std::string& file, const std::string& key, const std::string& name,
                 std::map<std::string, Factors>& out) {
  static constexpr std::pair<std::string_view, int> kSuffixes[] = {{".lora_A.weight", 0},
                                                                   {".lora_B.weight", 1},
                                                                   {".lora_embedding_A", 2},
                                                                   {".lora_embedding_B", 3}};
  for (const auto& [suffix, which] : kSuffixes) {
    if (!name.ends_with(suffix)) continue;
    auto& f = out[name.substr(0, name.size() - suffix.size())];
    (which % 2 == 0 ? f.a : f.b) = key;
    f.embedding = which >= 2;
    return true;
  }
  if (name.find("lora_") != std::string::npos)
    bad(file, "tensor '" + key + "' is a LoRA tensor mcpclass does not merge (plain lora_A / " +
                  "lora_B and lora_embedding_A / _B only)");
  return false;
}

const SafeTensor& finite(const std::string& file, const std::string& key, const SafeTensor& t) {
  for (const float v : t.values)
    if (!std::isfinite(v)) bad(file, "tensor '" + key + "' holds non-finite values");
  return t;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The update of `module` after its checks: both factors finite matrices of rank r whose product
// has the shape of the base's `module.weight`.
LoraUpdate checked_update(const LoraConfig& c, const std::string& adapter_file,
                          const std::string& module, const Factors& f, SafeTensors& adapter,
                          const CheckpointTensors& base) {
  const auto& a = finite(adapter_file, f.a, adapter.tensors.at(f.a));
  const auto& b = finite(adapter_file, f.b, adapter.tensors.at(f.b));
  const std::string target = module + ".weight";
  const auto it = base.tensors.tensors.find(target);
  if (it == base.tensors.tensors.end())
    bad(adapter_file, "tensor '" + f.a + "' adapts '" + target + "', which '" + base.description +
                          "' does not have");
  for (const auto& [key, t] : {std::pair{&f.a, &a}, std::pair{&f.b, &b}})
    if (t->shape.size() != 2) bad(adapter_file, "tensor '" + *key + "' is not a matrix");
  if (a.shape[0] != c.r)
    bad(adapter_file, "tensor '" + f.a + "' has rank " + std::to_string(a.shape[0]) + " but '" +
                          c.file + "' says r " + std::to_string(c.r));
  if (b.shape[1] != c.r)
    bad(adapter_file, "tensor '" + f.b + "' has rank " + std::to_string(b.shape[1]) + " but '" +
                          c.file + "' says r " + std::to_string(c.r));
  const std::vector<std::int64_t> want =
      f.embedding ? std::vector{a.shape[1], b.shape[0]} : std::vector{b.shape[0], a.shape[1]};
  if (it->second.shape != want)
    bad(adapter_file, "tensors '" + f.a + "' and '" + f.b + "' make a " + shape_text(want) +
                          " update but '" + target + "' is " + shape_text(it->second.shape));
  return {module, std::move(adapter.tensors.at(f.a)), std::move(adapter.tensors.at(f.b)),
          f.embedding};
}

// W += scaling · B·A (out × in), or its transpose for an embedding (W is num × dim, A is r × num,
// B is dim × r). One row of B·A at a time, accumulated in double: memory stays O(row).
void merge(double scaling, const std::string& adapter_file, const LoraUpdate& u,
           CheckpointTensors& base) {
  const std::string target = u.module + ".weight";
  auto& w = base.tensors.tensors.at(target);
  const auto rows = static_cast<std::size_t>(u.b.shape[0]);
  const auto cols = static_cast<std::size_t>(u.a.shape[1]);
  const auto rank = static_cast<std::size_t>(u.a.shape[0]);
  std::vector<double> row(cols);
  for (std::size_t i = 0; i < rows; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t k = 0; k < rank; ++k) {
      const double bik = u.b.values[i * rank + k];
      const float* ak = u.a.values.data() + k * cols;
      for (std::size_t j = 0; j < cols; ++j) row[j] += bik * ak[j];
    }
    for (std::size_t j = 0; j < cols; ++j) {
      auto& v = u.embedding ? w.values[j * rows + i] : w.values[i * cols + j];
      v = static_cast<float>(v + scaling * row[j]);
    }
  }
  base.file_of[target] = adapter_file;
}

}  // namespace

LoraAdapter read_lora_adapter(const std::string& adapter_dir, const CheckpointTensors& base,
                              const std::function<void(std::uint64_t)>& on_tensor) {
  const auto c = read_config(adapter_dir);
  const auto file = (std::filesystem::path(adapter_dir) / "adapter_model.safetensors").string();
  if (!std::filesystem::exists(file))
    throw classify::ClassifyError("'" + adapter_dir + "' has no adapter_model.safetensors");
  auto adapter = read_safetensors(file, on_tensor);
  std::map<std::string, Factors> factors;
  LoraAdapter out;
  out.file = file;
  out.scaling = c.scaling;
  std::vector<std::pair<std::string, std::string>> replaced;  // adapter key → base name
  for (const auto& [key, t] : adapter.tensors) {
    if (!key.starts_with(kPrefix))
      bad(file, "tensor '" + key + "' does not start with '" + std::string(kPrefix) +
                    "' (PEFT's prefix for a LoRA model's tensors)");
    const auto name = key.substr(kPrefix.size());
    if (lora_factor(file, key, name, factors)) continue;
    const auto dot = name.rfind('.');
    const auto module = dot == std::string::npos ? name : name.substr(0, dot);
    const bool trained_bias = c.bias != "none" && name.ends_with(".bias");
    if (!names_module(c.modules_to_save, module) && !trained_bias)
      bad(file, "tensor '" + key + "' is neither a LoRA factor nor in modules_to_save of '" +
                    c.file + "'");
    if (trained_bias && !base.tensors.tensors.contains(name))
      bad(file, "tensor '" + key + "' replaces '" + name + "', which '" + base.description +
                    "' does not have");
    replaced.emplace_back(key, name);
  }
  if (factors.empty() && replaced.empty()) bad(file, "holds no tensors");
  for (const auto& [module, f] : factors) {
    const auto& present = f.a.empty() ? f.b : f.a;
    if (f.a.empty() || f.b.empty())
      bad(file,
          "tensor '" + present + "' has no matching " + (f.a.empty() ? "A" : "B") + " factor");
    if (!targeted(c, module))
      bad(file, "tensor '" + f.a + "' adapts module '" + module + "', which target_modules of '" +
                    c.file + "' does not name");
    out.updates.push_back(checked_update(c, file, module, f, adapter, base));
  }
  for (const auto& [key, name] : replaced)
    out.replaced.emplace_back(name, std::move(adapter.tensors.at(key)));
  return out;
}

void merge_lora_adapter(LoraAdapter adapter, CheckpointTensors& base) {
  // A module saved whole may be new to the base (a classification head trained on a bare
  // encoder): the architecture then checks its shape like any other tensor.
  for (auto& [name, tensor] : adapter.replaced) {
    base.tensors.tensors[name] = std::move(tensor);
    base.file_of[name] = adapter.file;
  }
  for (const auto& u : adapter.updates) merge(adapter.scaling, adapter.file, u, base);
}

void merge_lora_adapter(const std::string& adapter_dir, CheckpointTensors& base,
                        const std::function<void(std::uint64_t)>& on_tensor) {
  merge_lora_adapter(read_lora_adapter(adapter_dir, base, on_tensor), base);
}

}  // namespace mcpclass::checkpoint
