// Categories a classifier chooses between. Plain values; CategorySet is immutable after
// construction and therefore safe to share between threads.
#pragma once

#include "mcpclass/classify/entropy.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

/// One class. `model` / `use_reasoning`, when set, override the routing policy for this class.
struct Category {
  std::string name;
  std::string description;
  std::string system_prompt;
  std::optional<std::string> model;
  std::optional<bool> use_reasoning;

  /// `{"name","description","system_prompt"[,"model"][,"use_reasoning"]}`.
  json::object to_json() const;
  /// Strict inverse of to_json(); `path` prefixes error messages. Throws ConfigError.
  static Category from_json(const json::value& v, const std::string& path = "category");

  friend bool operator==(const Category&, const Category&) = default;
};

/// Ordered, validated list of categories: position = class index. Never empty, names unique and
/// non-empty.
class CategorySet {
 public:
  /// Throws ConfigError when `categories` is empty or a name is empty or repeated.
  explicit CategorySet(std::vector<Category> categories);

  std::size_t size() const noexcept { return categories_.size(); }
  const Category& operator[](std::size_t index) const { return categories_[index]; }
  /// Bounds-checked; throws std::out_of_range.
  const Category& at(std::size_t index) const { return categories_.at(index); }
  auto begin() const noexcept { return categories_.begin(); }
  auto end() const noexcept { return categories_.end(); }

  /// Class index of `name`, if present (exact, case-sensitive).
  std::optional<std::size_t> index_of(std::string_view name) const;
  /// nullptr when absent.
  const Category* find(std::string_view name) const;
  /// The names in class order.
  const std::vector<std::string>& names() const noexcept { return names_; }
  /// The categories that set `use_reasoning`, for make_reasoning_decision().
  const ReasoningFlags& reasoning_flags() const noexcept { return reasoning_flags_; }

  /// JSON array of Category::to_json(), in class order.
  json::array to_json() const;
  /// Throws ConfigError naming the element (`categories[3].name`).
  static CategorySet from_json(const json::value& v, const std::string& path = "categories");

  friend bool operator==(const CategorySet&, const CategorySet&) = default;

 private:
  std::vector<Category> categories_;
  // Kept, not derived per call: every classification's decision needs both.
  std::vector<std::string> names_;
  ReasoningFlags reasoning_flags_;
};

}  // namespace mcpclass::classify
