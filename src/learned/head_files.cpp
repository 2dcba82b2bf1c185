// Head files (head_model.hpp): the JSON manifest and the parameters, as safetensors (read and
// written here, no libtorch) or as a TorchScript module (through the libtorch plugin). Both
// formats hold the same named tensors, checked here once.
#include "checkpoint/safetensors.hpp"
#include "learned/head_model.hpp"
#include "learned/learned_errors.hpp"
#include "learned/safetensors_file.hpp"
#include "learned/torch_plugin.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

namespace mcpclass::learned::detail {

namespace {

namespace json = boost::json;

// 2 added the lexical part, 3 the out-of-scope prototypes; 1 (dense only) and 2 still load.
constexpr int kHeadFormat = 2;
constexpr int kScopeHeadFormat = 3;

bool is_safetensors_path(const std::string& path) {
  return path.ends_with(".safetensors");
}

// Categories, temperatures, encoder id, the scope's k and method, and the head file's checksum
// (empty when the manifest has none) from `path.json`; true when it has a lexical part.
bool read_head_manifest(const std::string& path, HeadModel& head, std::string& checksum) {
  std::ifstream in(path + ".json", std::ios::binary);
  if (!in) throw ClassifyError("cannot open '" + path + ".json'");
  boost::system::error_code ec;
  const auto doc = json::parse(std::string(std::istreambuf_iterator<char>(in), {}), ec);
  if (ec || !doc.is_object()) throw ClassifyError("head manifest '" + path + ".json' is not JSON");
  bool lexical = false;
  try {
    const auto& m = doc.as_object();
    for (const auto& c : m.at("categories").as_array()) head.categories.emplace_back(c.as_string());
    head.temperature = m.at("temperature").to_number<double>();
    head.encoder_id = std::string(m.at("encoder_id").as_string());
    if (const auto* c = m.if_contains("checksum")) checksum = std::string(c->as_string());
    if (const auto* l = m.if_contains("lexical")) {
      const auto& o = l->as_object();
      lexical = true;
      head.lexical.mix = o.at("mix").to_number<double>();
      head.lexical.temperature = o.at("temperature").to_number<double>();
      head.lexical.mix_temperature = o.at("mix_temperature").to_number<double>();
    }
    if (const auto* sc = m.if_contains("scope")) {
      const auto& o = sc->as_object();
      head.scope.k = o.at("k").to_number<std::size_t>();
      head.scope.method = std::string(o.at("method").as_string());
      if (const auto* w = o.if_contains("density_weight"))
        head.scope.density_weight = w->to_number<double>();
      if (const auto* n = o.if_contains("probes")) head.scope.probes = n->to_number<std::size_t>();
      if (const auto* w = o.if_contains("label_energy_weight")) {
        head.scope.label_energy_weight = w->to_number<double>();
        head.scope.label_scale = o.at("label_scale").to_number<double>();
      }
      if (const auto* c = o.if_contains("catchall")) {
        const auto& names = head.categories;
        const auto at = std::find(names.begin(), names.end(), c->as_string());
        if (at == names.end())
          throw ClassifyError("scope catch-all '" + std::string(c->as_string()) +
                              "' is not one of the head's categories");
        head.scope.catchall = static_cast<std::size_t>(at - names.begin());
        head.scope.catchall_weight = o.at("catchall_weight").to_number<double>();
      }
    }
  } catch (const std::exception& e) {
    throw ClassifyError("head manifest '" + path + ".json' is incomplete: " + e.what());
  }
  if (!(head.temperature > 0.0)) throw ClassifyError("head temperature must be positive");
  if (lexical && (!(head.lexical.temperature > 0.0) || !(head.lexical.mix_temperature > 0.0) ||
                  !(head.lexical.mix >= 0.0 && head.lexical.mix <= 1.0)))
    throw ClassifyError("head manifest '" + path +
                        ".json': lexical temperatures must be positive and mix in [0, 1]");
  return lexical;
}

// The prototypes' inverted-file index, when the head has one: `scope_centroids` (lists ×
// width) and `scope_lists` (each list's row count, in prototype order, summing to `rows`).
void read_scope_index(const std::map<std::string, checkpoint::SafeTensor>& params,
                      const std::string& path, std::int64_t rows, ScopeModel& scope) {
  const auto c = params.find("scope_centroids");
  const auto l = params.find("scope_lists");
  if (c == params.end() && l == params.end()) return;
  const auto width = static_cast<std::int64_t>(scope.dimension);
  if (c == params.end() || l == params.end() || c->second.shape.size() != 2 ||
      c->second.shape[1] != width || l->second.shape.size() != 1 ||
      l->second.shape[0] != c->second.shape[0] || l->second.shape[0] < 1)
    throw ClassifyError("head '" + path + "' scope index has inconsistent shapes");
  scope.offsets.assign(1, 0);
  for (const float size : l->second.values) {
    if (!(size >= 0.0f) || size != std::floor(size) || size > static_cast<float>(rows))
      throw ClassifyError("head '" + path + "' scope_lists holds a size that is not a row count");
    scope.offsets.push_back(scope.offsets.back() + static_cast<std::size_t>(size));
  }
  if (scope.offsets.back() != static_cast<std::size_t>(rows))
    throw ClassifyError("head '" + path + "' scope_lists do not add up to the prototypes");
  scope.centroids = c->second.values;
}

// The fine-label term, when the manifest gives its weight: `scope_label_w` (labels × the
// encoder's width) and `scope_label_b`.
void read_scope_labels(const std::map<std::string, checkpoint::SafeTensor>& params,
                       const std::string& path, ScopeModel& scope) {
  const auto w = params.find("scope_label_w");
  const auto b = params.find("scope_label_b");
  if (scope.label_energy_weight == 0.0 && w == params.end() && b == params.end()) return;
  if (w == params.end() || b == params.end() || w->second.shape.size() != 2 ||
      w->second.shape[1] != static_cast<std::int64_t>(scope.input) || b->second.shape.size() != 1 ||
      b->second.shape[0] != w->second.shape[0] || b->second.shape[0] < 1)
    throw ClassifyError("head '" + path + "' scope label term has inconsistent shapes");
  scope.label_weights = w->second.values;
  scope.label_bias = b->second.values;
}

// The out-of-scope prototypes and quantiles (head_model.hpp ScopeModel).
void read_scope_tensors(const std::map<std::string, checkpoint::SafeTensor>& params,
                        const std::string& path, HeadModel& head) {
  const auto p = params.find("scope_prototypes");
  const auto q = params.find("scope_quantiles");
  if (p == params.end() || q == params.end())
    throw ClassifyError("head '" + path +
                        "' has a scope manifest but no scope_prototypes/scope_quantiles");
  const auto in = static_cast<std::int64_t>(head.layers.front().in);
  auto width = in;  // of the prototypes: the encoder's, or the projection's outputs
  if (const auto w = params.find("scope_projection"); w != params.end()) {
    if (w->second.shape.size() != 2 || w->second.shape[1] != in || w->second.shape[0] < 1)
      throw ClassifyError("head '" + path + "' scope_projection is not outputs × " +
                          std::to_string(in));
    width = w->second.shape[0];
    head.scope.projection = w->second.values;
  }
  if (p->second.shape.size() != 2 || p->second.shape[1] != width || p->second.shape[0] < 1 ||
      q->second.shape.size() != 1 || q->second.elements() < 2 || head.scope.k < 1)
    throw ClassifyError("head '" + path + "' scope part has inconsistent shapes");
  if (!std::is_sorted(q->second.values.begin(), q->second.values.end()))
    throw ClassifyError("head '" + path + "' scope_quantiles are not ascending");
  if (const auto d = params.find("scope_density"); d != params.end()) {
    if (d->second.shape.size() != 1 || d->second.shape[0] != p->second.shape[0])
      throw ClassifyError("head '" + path +
                          "' scope_density does not have one value per prototype");
    head.scope.density = d->second.values;
  } else if (head.scope.density_weight != 0.0) {
    throw ClassifyError("head '" + path + "' has a scope density weight but no scope_density");
  }
  head.scope.input = head.layers.front().in;
  head.scope.dimension = static_cast<std::size_t>(width);
  head.scope.prototypes = p->second.values;
  head.scope.quantiles = q->second.values;
  read_scope_index(params, path, p->second.shape[0], head.scope);
  read_scope_labels(params, path, head.scope);
}

// The layers and lexical part from the named tensors, every shape checked against the others.
void read_head_tensors(const std::map<std::string, checkpoint::SafeTensor>& params, bool lexical,
                       const std::string& path, HeadModel& head) {
  for (int l = 0; params.contains("w" + std::to_string(l)); ++l) {
    const auto& w = params.at("w" + std::to_string(l));
    const auto b = params.find("b" + std::to_string(l));
    if (w.shape.size() != 2 || b == params.end() || b->second.shape.size() != 1 ||
        b->second.shape[0] != w.shape[0])
      throw ClassifyError("head layer " + std::to_string(l) + " has inconsistent shapes");
    DenseLayer layer;
    layer.out = static_cast<std::size_t>(w.shape[0]);
    layer.in = static_cast<std::size_t>(w.shape[1]);
    layer.weight = w.values;
    layer.bias = b->second.values;
    if (!head.layers.empty() && head.layers.back().out != layer.in)
      throw ClassifyError("head layers do not chain");
    head.layers.push_back(std::move(layer));
  }
  if (head.layers.empty()) throw ClassifyError("head '" + path + "' has no layers (w0, b0)");
  const auto classes = head.categories.size();
  if (head.layers.back().out != classes)
    throw ClassifyError("head '" + path + "' has " + std::to_string(head.layers.back().out) +
                        " outputs for " + std::to_string(classes) + " categories");
  if (!head.scope.method.empty()) read_scope_tensors(params, path, head);  // manifest has a scope
  if (!lexical) return;
  if (!params.contains("lex_w") || !params.contains("lex_b") || !params.contains("lex_idf"))
    throw ClassifyError("head '" + path + "' has a lexical manifest but no lex_w/lex_b/lex_idf");
  const auto& w = params.at("lex_w");
  const auto& b = params.at("lex_b");
  const auto& idf = params.at("lex_idf");
  if (w.shape.size() != 2 || w.shape[0] != static_cast<std::int64_t>(classes) ||
      b.elements() != static_cast<std::size_t>(w.shape[0]) ||
      idf.elements() != static_cast<std::size_t>(w.shape[1]))
    throw ClassifyError("head '" + path + "' lexical part has inconsistent shapes");
  head.lexical.weight = w.values;
  head.lexical.bias = b.values;
  head.lexical.idf = idf.values;
}

// The tensors read_head_tensors expects, from `head`.
std::map<std::string, checkpoint::SafeTensor> head_tensors(const HeadModel& head) {
  std::map<std::string, checkpoint::SafeTensor> out;
  for (std::size_t l = 0; l < head.layers.size(); ++l) {
    const auto& layer = head.layers[l];
    const auto in = static_cast<std::int64_t>(layer.in);
    const auto n = static_cast<std::int64_t>(layer.out);
    out["w" + std::to_string(l)] = {{n, in}, layer.weight};
    out["b" + std::to_string(l)] = {{n}, layer.bias};
  }
  const auto& lex = head.lexical;
  if (!lex.empty()) {
    const auto vocabulary = static_cast<std::int64_t>(lex.idf.size());
    out["lex_w"] = {{static_cast<std::int64_t>(lex.bias.size()), vocabulary}, lex.weight};
    out["lex_b"] = {{static_cast<std::int64_t>(lex.bias.size())}, lex.bias};
    out["lex_idf"] = {{vocabulary}, lex.idf};
  }
  const auto& scope = head.scope;
  if (!scope.empty()) {
    out["scope_prototypes"] = {
        {static_cast<std::int64_t>(scope.rows()), static_cast<std::int64_t>(scope.dimension)},
        scope.prototypes};
    out["scope_quantiles"] = {{static_cast<std::int64_t>(scope.quantiles.size())}, scope.quantiles};
    if (!scope.projection.empty())
      out["scope_projection"] = {
          {static_cast<std::int64_t>(scope.dimension), static_cast<std::int64_t>(scope.input)},
          scope.projection};
    if (!scope.density.empty())
      out["scope_density"] = {{static_cast<std::int64_t>(scope.density.size())}, scope.density};
    if (!scope.label_bias.empty()) {
      const auto labels = static_cast<std::int64_t>(scope.label_bias.size());
      out["scope_label_w"] = {{labels, static_cast<std::int64_t>(scope.input)},
                              scope.label_weights};
      out["scope_label_b"] = {{labels}, scope.label_bias};
    }
    if (!scope.centroids.empty()) {
      const auto lists = static_cast<std::int64_t>(scope.offsets.size() - 1);
      out["scope_centroids"] = {{lists, static_cast<std::int64_t>(scope.dimension)},
                                scope.centroids};
      std::vector<float> sizes;
      for (std::size_t i = 0; i + 1 < scope.offsets.size(); ++i)
        sizes.push_back(static_cast<float>(scope.offsets[i + 1] - scope.offsets[i]));
      out["scope_lists"] = {{lists}, std::move(sizes)};
    }
  }
  return out;
}

}  // namespace

HeadModel load_head(const std::string& path) {
  HeadModel head;
  std::string checksum;
  const bool lexical = read_head_manifest(path, head, checksum);
  // The head and its manifest are two files, each renamed into place: a training cut short
  // between the renames (disk full) or two trainings at once can pair one's head with the
  // other's manifest. Manifests before the checksum was recorded load unchecked.
  if (!checksum.empty() && file_checksum(path) != checksum)
    throw ClassifyError("head '" + path + "' does not match its manifest '" + path +
                        ".json' (checksum): an interrupted or concurrent training; train it again");
  const auto params = checkpoint::looks_like_safetensors(path)
                          ? checkpoint::read_safetensors(path).tensors
                          : torch_plugin().read_torchscript_head(path);
  read_head_tensors(params, lexical, path, head);
  return head;
}

void save_head(const HeadModel& head, const std::string& path, const json::object& report) {
  std::string checksum;
  if (is_safetensors_path(path)) {
    checksum = write_safetensors(path, {{{"format", "mcpclass-head"}}, head_tensors(head)});
  } else {
    torch_plugin().write_torchscript_head(head, path);
    checksum = file_checksum(path);
  }
  const auto& lex = head.lexical;
  json::array cats;
  for (const auto& c : head.categories) cats.emplace_back(c);
  // A TorchScript head holds no scope tensors (the plugin writes the dense and lexical parts).
  const bool scope = !head.scope.empty() && is_safetensors_path(path);
  json::object manifest{{"format", scope         ? kScopeHeadFormat
                                   : lex.empty() ? 1
                                                 : kHeadFormat},
                        {"categories", cats},
                        {"encoder_id", head.encoder_id},
                        {"temperature", head.temperature},
                        {"hidden", head.layers.size() > 1 ? head.layers.front().out : 0},
                        {"checksum", checksum},
                        {"report", report}};
  if (!lex.empty())
    manifest["lexical"] = {{"mix", lex.mix},
                           {"temperature", lex.temperature},
                           {"mix_temperature", lex.mix_temperature},
                           {"vocabulary", lex.idf.size()}};
  if (scope) {
    json::object o{{"method", head.scope.method},
                   {"k", head.scope.k},
                   {"prototypes", head.scope.rows()},
                   {"quantiles", head.scope.quantiles.size()},
                   {"density_weight", head.scope.density_weight}};
    if (!head.scope.label_bias.empty()) {
      o["labels"] = head.scope.label_bias.size();
      o["label_scale"] = head.scope.label_scale;
      o["label_energy_weight"] = head.scope.label_energy_weight;
    }
    if (!head.scope.centroids.empty()) {
      o["lists"] = head.scope.offsets.size() - 1;
      o["probes"] = head.scope.probes;
    }
    if (head.scope.catchall) {
      o["catchall"] = head.categories.at(*head.scope.catchall);
      o["catchall_weight"] = head.scope.catchall_weight;
    }
    manifest["scope"] = std::move(o);
  }
  write_file_atomically(path + ".json", json::serialize(manifest));
}

}  // namespace mcpclass::learned::detail
