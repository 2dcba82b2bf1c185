#include "mcpclass/config/semantic_cache_settings.hpp"

#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace mcpclass::config {

namespace json = boost::json;
namespace strict = util::strict;

namespace {

// Each waiting store holds its whole answer in memory: a bound on the bound, so that a slip of
// the pen cannot lift it altogether.
constexpr std::int64_t kMaxPendingWrites = 1'000'000;

std::string check_address(const std::string& a, const std::string& path) {
  if (a.starts_with('/')) return a;
  const auto colon = a.rfind(':');
  const auto port = colon == std::string::npos ? std::string() : a.substr(colon + 1);
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  if (colon == 0 || !digits || std::stoi(port) < 1 || std::stoi(port) > 65535)
    strict::fail(path, fmt::format("'{}' is not host:port or an absolute Unix socket path", a));
  return a;
}

RedisTlsSettings tls_from_json(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RedisTlsSettings t;
  t.enabled = r.boolean("enabled").value_or(true);
  if (auto f = r.string("ca_file")) t.ca_file = *f;
  if (auto f = r.string("cert_file")) t.cert_file = *f;
  if (auto f = r.string("key_file")) t.key_file = *f;
  if (auto n = r.string("server_name")) t.server_name = *n;
  r.finish();
  if (t.cert_file.empty() != t.key_file.empty())
    strict::fail(path, "needs both cert_file and key_file (or neither)");
  return t;
}

json::object tls_to_json(const RedisTlsSettings& t) {
  json::object o;
  if (!t.ca_file.empty()) o["ca_file"] = t.ca_file;
  if (!t.cert_file.empty()) o["cert_file"] = t.cert_file;
  if (!t.key_file.empty()) o["key_file"] = t.key_file;
  if (!t.server_name.empty()) o["server_name"] = t.server_name;
  return o;
}

}  // namespace

RedisCacheSettings RedisCacheSettings::from_json(const json::value& v, const std::string& path,
                                                 RedisCacheSettings s) {
  strict::ObjectReader r(v, path);
  if (auto a = r.string("address")) s.address = check_address(*a, r.path_of("address"));
  if (auto k = r.string("key_prefix")) s.key_prefix = *k;
  if (auto t = r.seconds("connect_timeout", false)) s.connect_timeout = *t;
  if (auto t = r.seconds("timeout", false)) s.timeout = *t;
  if (auto u = r.string("username")) s.username = *u;
  if (auto p = r.string("password")) s.password = *p;
  if (auto d = r.count("database", 0, std::numeric_limits<int>::max()))
    s.database = static_cast<int>(*d);
  if (auto t = r.seconds("backoff_min", false)) s.backoff_min = *t;
  if (auto t = r.seconds("backoff_max", false)) s.backoff_max = *t;
  if (auto n = r.count("connections", 1, 256)) s.connections = *n;
  if (auto n = r.count("max_pending_writes", 1, kMaxPendingWrites)) s.max_pending_writes = *n;
  if (auto b = r.number("read_block")) {
    // Shorter would poll Redis in a loop; longer would hold up every stop.
    if (!(*b >= 0.01 && *b <= 10))
      strict::fail(r.path_of("read_block"),
                   "must be within [0.01, 10] seconds (the stream reader's XREAD BLOCK; a stop "
                   "waits for it)");
    s.read_block = std::chrono::milliseconds(std::llround(*b * 1000));
  }
  if (const auto* t = r.get("tls")) s.tls = tls_from_json(*t, r.path_of("tls"));
  r.finish();
  if (s.tls.enabled && s.tls.server_name.empty() && s.address.starts_with('/'))
    strict::fail(r.path_of("tls") + ".server_name",
                 "is needed with a Unix socket address (the name Redis's certificate carries)");
  if (!s.username.empty() && s.password.empty())
    strict::fail(r.path_of("username"), "needs a password (AUTH takes a user with its password)");
  if (s.backoff_max < s.backoff_min)
    strict::fail(r.path_of("backoff_max"), "is less than backoff_min");
  return s;
}

json::object RedisCacheSettings::to_json() const {
  json::object o{{"address", address},
                 {"key_prefix", key_prefix},
                 {"connect_timeout", static_cast<double>(connect_timeout.count()) / 1000},
                 {"timeout", static_cast<double>(timeout.count()) / 1000},
                 {"username", username},
                 {"password", password},  // as written: a "${NAME}" reference, not the secret
                 {"database", database},
                 {"backoff_min", static_cast<double>(backoff_min.count()) / 1000},
                 {"backoff_max", static_cast<double>(backoff_max.count()) / 1000},
                 {"connections", connections},
                 {"max_pending_writes", max_pending_writes},
                 {"read_block", static_cast<double>(read_block.count()) / 1000}};
  if (tls.enabled) o["tls"] = tls_to_json(tls);  // off: the section as it was before TLS
  return o;
}

SemanticCacheSettings SemanticCacheSettings::from_json(const json::value& v,
                                                       const std::string& path) {
  strict::ObjectReader r(v, path);
  SemanticCacheSettings s;
  s.enabled = r.boolean("enabled").value_or(true);
  if (auto b = r.string("backend_type")) {
    if (*b != "memory" && *b != "redis")
      strict::fail(r.path_of("backend_type"), fmt::format("'{}' is not one of memory, redis", *b));
    s.backend_type = *b;
  }
  if (const auto* redis = r.get("redis"))
    s.redis = RedisCacheSettings::from_json(*redis, r.path_of("redis"), s.redis);
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
          {"redis", redis.to_json()},
          {"similarity_threshold", similarity_threshold},
          {"ttl_seconds", static_cast<double>(ttl.count()) / 1000},
          {"max_entries", max_entries},
          {"max_bytes", max_bytes},
          {"max_entry_bytes", max_entry_bytes}};
}

}  // namespace mcpclass::config
