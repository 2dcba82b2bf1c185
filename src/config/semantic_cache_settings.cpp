#include "mcpclass/config/semantic_cache_settings.hpp"

#include "util/config_reader.hpp"

#include <fmt/format.h>

namespace mcpclass::config {

namespace json = boost::json;
namespace strict = util::strict;

SemanticCacheSettings SemanticCacheSettings::from_json(const json::value& v,
                                                       const std::string& path) {
  strict::ObjectReader r(v, path);
  SemanticCacheSettings s;
  s.enabled = r.boolean("enabled").value_or(true);
  if (auto b = r.string("backend_type")) {
    if (*b != "memory")
      strict::fail(r.path_of("backend_type"),
                   fmt::format("'{}' is not a backend of this build (memory)", *b));
    s.backend_type = *b;
  }
  if (auto t = r.number("similarity_threshold")) {
    if (!(*t > 0.0 && *t <= 1.0))
      strict::fail(r.path_of("similarity_threshold"), "must be in (0, 1]");
    s.similarity_threshold = *t;
  }
  if (auto t = r.seconds("ttl_seconds", false)) s.ttl = *t;
  if (auto n = r.count("max_entries", 1, 100'000'000)) s.max_entries = *n;
  if (auto b = r.count("max_bytes", 4096, std::int64_t{1} << 40)) s.max_bytes = *b;
  if (auto b = r.count("max_entry_bytes", 256, std::int64_t{1} << 32)) s.max_entry_bytes = *b;
  r.finish();
  if (s.max_entry_bytes > s.max_bytes)
    strict::fail(r.path_of("max_entry_bytes"),
                 fmt::format("{} is more than max_bytes ({})", s.max_entry_bytes, s.max_bytes));
  return s;
}

json::object SemanticCacheSettings::to_json() const {
  return {{"enabled", enabled},
          {"backend_type", backend_type},
          {"similarity_threshold", similarity_threshold},
          {"ttl_seconds", static_cast<double>(ttl.count()) / 1000},
          {"max_entries", max_entries},
          {"max_bytes", max_bytes},
          {"max_entry_bytes", max_entry_bytes}};
}

}  // namespace mcpclass::config
