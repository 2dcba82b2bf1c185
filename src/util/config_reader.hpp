// Internal: strict, path-aware reading of configuration objects, for every layer that reads its
// own section of the configuration document. Every accessor throws
// ConfigError naming the full key path, and finish() rejects keys nobody asked for, so typos in
// a config document are reported instead of silently ignored.
#pragma once

#include "mcpclass/util/config_error.hpp"

#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::util::strict {

namespace json = boost::json;

[[noreturn]] void fail(const std::string& path, const std::string& message);
std::string member_path(std::string_view parent, std::string_view key);
std::string index_path(std::string_view parent, std::size_t index);
/// Name of the JSON type as users read it in messages ("string", "number", ...).
std::string_view type_name(const json::value& v);

std::string as_string(const json::value& v, const std::string& path);
bool as_bool(const json::value& v, const std::string& path);
double as_number(const json::value& v, const std::string& path);
std::int64_t as_integer(const json::value& v, const std::string& path);
const json::object& as_object(const json::value& v, const std::string& path);
const json::array& as_array(const json::value& v, const std::string& path);
std::vector<std::string> as_string_list(const json::value& v, const std::string& path);

/// The enum value `value` names in `names`; otherwise fails at `path` listing the choices.
template <class Enum, std::size_t N>
Enum parse_enum(const std::string& value, const std::array<std::pair<const char*, Enum>, N>& names,
                const std::string& path) {
  std::string choices;
  for (const auto& [name, e] : names) {
    if (value == name) return e;
    choices += (choices.empty() ? "" : ", ") + std::string(name);
  }
  fail(path, "'" + value + "' is not one of " + choices);
}

/// The name of `e` in `names` ("" if absent).
template <class Enum, std::size_t N>
const char* enum_name(Enum e, const std::array<std::pair<const char*, Enum>, N>& names) {
  for (const auto& [name, value] : names)
    if (value == e) return name;
  return "";
}

/// Reads members of one object; remembers which keys were consumed.
class ObjectReader {
 public:
  ObjectReader(const json::value& v, std::string path);
  ObjectReader(const json::object& o, std::string path) : obj_(o), path_(std::move(path)) {}

  const std::string& path() const noexcept { return path_; }
  std::string path_of(std::string_view key) const { return member_path(path_, key); }
  const json::object& object() const noexcept { return obj_; }

  /// The raw member, or nullptr when absent (explicit null counts as absent).
  const json::value* get(std::string_view key);
  const json::value& required(std::string_view key);

  std::optional<std::string> string(std::string_view key);
  std::optional<bool> boolean(std::string_view key);
  std::optional<double> number(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key);
  std::optional<std::vector<std::string>> string_list(std::string_view key);
  /// An integer within [min, max] (a count or a size in bytes).
  std::optional<std::size_t> count(std::string_view key, std::int64_t min,
                                   std::int64_t max = std::numeric_limits<std::int64_t>::max());
  /// A duration given in seconds (a number), within (0, 86400] — or [0, 86400] with allow_zero.
  std::optional<std::chrono::milliseconds> seconds(std::string_view key, bool allow_zero);

  /// Throws for the first key that no accessor consumed.
  void finish() const;

 private:
  const json::object& obj_;
  std::string path_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace mcpclass::util::strict
