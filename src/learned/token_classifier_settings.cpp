// The parts of token_classifier.hpp a build without the learned component also has: the
// settings, the strategy names and the span's JSON.
#include "mcpclass/learned/token_classifier.hpp"

#include "learned/precision_setting.hpp"
#include "util/config_reader.hpp"

namespace mcpclass::learned {

namespace {

constexpr std::pair<TokenAggregation, std::string_view> kNames[] = {
    {TokenAggregation::none, "none"},   {TokenAggregation::simple, "simple"},
    {TokenAggregation::first, "first"}, {TokenAggregation::average, "average"},
    {TokenAggregation::max, "max"},
};

}  // namespace

std::string_view to_string(TokenAggregation a) {
  for (const auto& [value, name] : kNames)
    if (value == a) return name;
  return "simple";
}

std::optional<TokenAggregation> parse_token_aggregation(std::string_view name) {
  for (const auto& [value, n] : kNames)
    if (n == name) return value;
  return std::nullopt;
}

json::object TokenSpan::to_json(TokenAggregation aggregation) const {
  json::object o;
  o[aggregation == TokenAggregation::none ? "entity" : "entity_group"] = label;
  o["score"] = score;
  o["word"] = word;
  o["start"] = start;
  o["end"] = end;
  o["byte_start"] = byte_start;
  o["byte_end"] = byte_end;
  if (index) o["index"] = *index;
  return o;
}

TokenClassifierSettings TokenClassifierSettings::from_json(const json::value& v,
                                                           const std::string& path) {
  namespace strict = util::strict;
  strict::ObjectReader r(v, path);
  TokenClassifierSettings s;
  s.model = r.string("model").value_or("");
  if (s.model.empty()) strict::fail(r.path_of("model"), "is required (a checkpoint directory)");
  if (const auto a = r.string("aggregation")) {
    const auto parsed = parse_token_aggregation(*a);
    if (!parsed)
      strict::fail(r.path_of("aggregation"),
                   "must be none, simple, first, average or max (got '" + *a + "')");
    s.aggregation = *parsed;
  }
  s.stride = r.count("stride", 0, 100'000).value_or(s.stride);
  s.max_tokens = r.count("max_tokens", 0, 100'000).value_or(s.max_tokens);
  s.threads = r.count("threads", 1, 256).value_or(s.threads);
  s.precision = detail::read_precision(r, s.precision);
  s.kernels = r.string("kernels").value_or("");
  s.ignore_labels = r.string_list("ignore_labels").value_or(s.ignore_labels);
  s.tool = r.string("tool").value_or(s.tool);
  if (s.tool.empty()) strict::fail(r.path_of("tool"), "must not be empty");
  r.finish();
  return s;
}

json::object TokenClassifierSettings::to_json() const {
  json::array ignore;
  for (const auto& l : ignore_labels) ignore.emplace_back(l);
  json::object o{{"model", model},
                 {"aggregation", to_string(aggregation)},
                 {"stride", stride},
                 {"max_tokens", max_tokens},
                 {"ignore_labels", std::move(ignore)},
                 {"threads", threads},
                 {"tool", tool}};
  if (precision != EncoderPrecision::automatic) o["precision"] = precision_name(precision);
  if (!kernels.empty()) o["kernels"] = kernels;
  return o;
}

}  // namespace mcpclass::learned
