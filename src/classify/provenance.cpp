#include "mcpclass/classify/provenance.hpp"

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/util/fnv1a.hpp"

namespace mcpclass::classify {

namespace {

std::string id_of(const util::Fnv1a64& h) {
  return "fnv1a64:" + h.hex();
}

}  // namespace

std::string fnv1a64_id(std::string_view bytes) {
  util::Fnv1a64 h;
  h.mix(bytes);
  return id_of(h);
}

std::string taxonomy_id(const std::vector<std::string>& names) {
  util::Fnv1a64 h;
  for (const auto& name : names) {
    h.mix(name);
    h.mix_byte(0);
  }
  return id_of(h);
}

std::string Classifier::model_id() const {
  // Only the keys that name the model: info() also carries counters that change per call.
  const json::object facts = info();
  json::object stable;
  for (const std::string_view key :
       {"kind", "model", "model_id", "adapter", "index", "endpoint", "tool"})
    if (const auto* v = facts.if_contains(key)) stable[key] = *v;
  return fnv1a64_id(json::serialize(stable));
}

json::object Provenance::to_json() const {
  json::object o{{"kind", kind},
                 {"model_id", model_id},
                 {"tokenizer_id", nullptr},
                 {"taxonomy_id", taxonomy_id},
                 {"generation", generation},
                 {"cached", cached},
                 {"fallback", fallback}};
  if (!tokenizer_id.empty()) o["tokenizer_id"] = tokenizer_id;
  return o;
}

Provenance Provenance::of(const Classification& c) const {
  Provenance p = *this;
  p.cached = c.cached;
  p.fallback = c.fallback;
  return p;
}

std::vector<std::pair<std::string, std::string>> Provenance::headers() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto put = [&out](const char* name, const std::string& value) {
    if (!value.empty()) out.emplace_back(name, value);
  };
  put("X-Mcpclass-Classifier", kind);
  put("X-Mcpclass-Model-Id", model_id);
  put("X-Mcpclass-Tokenizer", tokenizer_id);
  put("X-Mcpclass-Taxonomy", taxonomy_id);
  put("X-Mcpclass-Generation", std::to_string(generation));
  put("X-Mcpclass-Cached", cached ? "true" : "false");
  put("X-Mcpclass-Fallback", fallback ? "true" : "false");
  return out;
}

Provenance provenance_of(const Classifier& classifier, std::uint64_t generation) {
  return {.kind = classifier.kind(),
          .model_id = classifier.model_id(),
          .tokenizer_id = classifier.tokenizer_id(),
          .taxonomy_id = taxonomy_id(classifier.categories().names()),
          .generation = generation,
          .cached = false,
          .fallback = false};
}

}  // namespace mcpclass::classify
