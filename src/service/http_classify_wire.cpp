#include "service/http_classify_wire.hpp"

#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/service/mcp_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

namespace mcpclass::service::detail {

namespace json = boost::json;

namespace {

ClassifyRefusal bad(std::string message) {
  return {400, "validation", std::move(message)};
}

// The media type of a Content-Type value, lower-cased, without parameters or blanks.
std::string media_type(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  std::string out;
  for (const char c : content_type)
    if (c != ' ' && c != '\t')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<ClassifyRefusal> read_parameters(const json::value& v, ClassifyCall& call) {
  if (!v.is_object()) return bad("parameters must be an object");
  for (const auto& kv : v.get_object()) {
    if (kv.key() != "aggregation_strategy")
      return bad(
          fmt::format("parameters.{} is not a parameter of /classify/spans (it takes "
                      "aggregation_strategy)",
                      std::string_view(kv.key())));
    if (!kv.value().is_string())
      return bad(
          "parameters.aggregation_strategy must be a string (none, simple, first, "
          "average or max)");
    call.aggregation = std::string(kv.value().get_string());
  }
  return std::nullopt;
}

}  // namespace

std::variant<json::object, ClassifyRefusal> read_json_object_body(std::string_view content_type,
                                                                  std::string_view body,
                                                                  std::string_view shape) {
  if (const std::string type = media_type(content_type); type != "application/json")
    return ClassifyRefusal{415, "unsupported_media_type",
                           fmt::format("Content-Type must be application/json (got {})",
                                       type.empty() ? "none" : "'" + type + "'")};
  boost::system::error_code ec;
  json::value parsed = json::parse(body, ec);
  if (ec) return bad(fmt::format("the body is not JSON: {}", ec.message()));
  if (!parsed.is_object()) return bad(fmt::format("the body must be a JSON object: {}", shape));
  return std::move(parsed.get_object());
}

std::variant<ClassifyCall, ClassifyRefusal> read_classify_call(std::string_view content_type,
                                                               std::string_view body, bool spans,
                                                               std::size_t max_text_length) {
  auto parsed = read_json_object_body(content_type, body,
                                      R"({"inputs": "text"} or {"inputs": ["text", ...]})");
  if (auto* refusal = std::get_if<ClassifyRefusal>(&parsed)) return *refusal;
  ClassifyCall call;
  const json::value* inputs = nullptr;
  for (const auto& kv : std::get<json::object>(parsed)) {
    const std::string_view key = kv.key();
    if (key == "inputs") {
      inputs = &kv.value();
    } else if (key == "parameters" && spans) {
      if (auto refusal = read_parameters(kv.value(), call)) return *refusal;
    } else {
      return bad(fmt::format("unknown key '{}' (the body takes inputs{})", key,
                             spans ? " and parameters" : ""));
    }
  }
  if (inputs == nullptr) return bad(R"(inputs is required: {"inputs": "text"})");
  auto text_at = [&](const json::value& text, const std::string& where,
                     std::vector<std::string>& into) -> std::optional<ClassifyRefusal> {
    if (!text.is_string()) return bad(where + " must be a string");
    if (auto problem = text_problem(text.get_string(), max_text_length))
      return bad(where + ": " + *problem);
    into.emplace_back(text.get_string());
    return std::nullopt;
  };
  // A text, or a sentence pair {"text", "text_pair"}; a list holds one kind only.
  std::optional<bool> pairs;
  auto add = [&](const json::value& item,
                 const std::string& where) -> std::optional<ClassifyRefusal> {
    const bool pair = item.is_object();
    if (pairs && *pairs != pair)
      return bad(where + ": inputs mixes texts and {text, text_pair} pairs; send one kind");
    pairs = pair;
    if (!pair) return text_at(item, where, call.inputs);
    if (spans) return bad(where + ": /classify/spans takes texts, not {text, text_pair} pairs");
    const auto& o = item.get_object();
    for (const auto& kv : o)
      if (kv.key() != "text" && kv.key() != "text_pair")
        return bad(fmt::format("{}: unknown key '{}' (a pair is {{\"text\", \"text_pair\"}})",
                               where, std::string_view(kv.key())));
    const auto* text = o.if_contains("text");
    const auto* second = o.if_contains("text_pair");
    if (text == nullptr || second == nullptr)
      return bad(where + R"(: a pair needs both "text" and "text_pair")");
    if (auto refusal = text_at(*text, where + ".text", call.inputs)) return refusal;
    return text_at(*second, where + ".text_pair", call.text_pairs);
  };
  if (const json::array* list = inputs->if_array()) {
    call.batch = true;
    if (list->empty()) return bad("inputs is an empty list");
    if (list->size() > kMaxClassifyInputs)
      return ClassifyRefusal{
          413, "payload_too_large",
          fmt::format("inputs has {} texts; the limit is {}", list->size(), kMaxClassifyInputs)};
    for (std::size_t i = 0; i < list->size(); ++i)
      if (auto refusal = add((*list)[i], fmt::format("inputs[{}]", i))) return *refusal;
  } else if (!inputs->is_string() && !inputs->is_object()) {
    return bad(R"(inputs must be a string, a {"text", "text_pair"} pair or a list of either)");
  } else if (auto refusal = add(*inputs, "inputs")) {
    return *refusal;
  }
  return call;
}

std::string classify_error_body(std::string_view type, std::string_view message) {
  return json::serialize(json::object{{"error", message}, {"error_type", type}});
}

json::array label_scores(const classify::Classification& c,
                         const classify::CategorySet& categories) {
  std::vector<std::size_t> order(categories.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto score = [&](std::size_t i) { return i < c.probabilities.size() ? c.probabilities[i] : 0.0; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return score(a) > score(b); });
  json::array out;
  out.reserve(order.size());
  for (const std::size_t i : order)
    out.emplace_back(json::object{{"label", categories[i].name}, {"score", score(i)}});
  return out;
}

json::array pipeline_spans(const json::object& detected) {
  json::array out;
  for (const auto& span : detected.at("spans").as_array()) {
    json::object s = span.as_object();
    s.erase("byte_start");
    s.erase("byte_end");
    out.emplace_back(std::move(s));
  }
  return out;
}

}  // namespace mcpclass::service::detail
