#include "mcpclass/classify/category.hpp"

#include "util/config_reader.hpp"

#include <algorithm>
#include <set>

namespace mcpclass::classify {

json::object Category::to_json() const {
  json::object out{{"name", name}, {"description", description}, {"system_prompt", system_prompt}};
  if (model) out["model"] = *model;
  if (use_reasoning) out["use_reasoning"] = *use_reasoning;
  return out;
}

Category Category::from_json(const json::value& v, const std::string& path) {
  util::strict::ObjectReader r(v, path);
  Category c;
  c.name = util::strict::as_string(r.required("name"), r.path_of("name"));
  c.description = r.string("description").value_or("");
  c.system_prompt = r.string("system_prompt").value_or("");
  c.model = r.string("model");
  c.use_reasoning = r.boolean("use_reasoning");
  if (c.model && c.model->empty()) util::strict::fail(r.path_of("model"), "must not be empty");
  r.finish();
  return c;
}

namespace {
// Validation shared by the constructor and from_json so both report the same problems; `path`
// is empty when there is no document to point into.
void validate(const std::vector<Category>& categories, const std::string& path) {
  if (categories.empty()) util::strict::fail(path, "at least one category is required");
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < categories.size(); ++i) {
    const auto& name = categories[i].name;
    const auto name_path = util::strict::member_path(util::strict::index_path(path, i), "name");
    if (name.empty()) util::strict::fail(name_path, "category name must not be empty");
    if (!seen.insert(name).second)
      util::strict::fail(name_path, "duplicate category name '" + name + "'");
  }
}
}  // namespace

CategorySet::CategorySet(std::vector<Category> categories) : categories_(std::move(categories)) {
  validate(categories_, "categories");
  names_.reserve(categories_.size());
  for (const auto& c : categories_) {
    names_.push_back(c.name);
    if (c.use_reasoning) reasoning_flags_.emplace(c.name, *c.use_reasoning);
  }
}

std::optional<std::size_t> CategorySet::index_of(std::string_view name) const {
  const auto it = std::find_if(categories_.begin(), categories_.end(),
                               [&](const Category& c) { return c.name == name; });
  if (it == categories_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - categories_.begin());
}

const Category* CategorySet::find(std::string_view name) const {
  const auto index = index_of(name);
  return index ? &categories_[*index] : nullptr;
}

json::array CategorySet::to_json() const {
  json::array out;
  out.reserve(categories_.size());
  for (const auto& c : categories_) out.push_back(c.to_json());
  return out;
}

CategorySet CategorySet::from_json(const json::value& v, const std::string& path) {
  const auto& arr = util::strict::as_array(v, path);
  std::vector<Category> categories;
  categories.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i)
    categories.push_back(Category::from_json(arr[i], util::strict::index_path(path, i)));
  validate(categories, path);
  return CategorySet(std::move(categories));
}

}  // namespace mcpclass::classify
