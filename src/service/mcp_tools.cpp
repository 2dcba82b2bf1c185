#include "mcpclass/service/mcp_tools.hpp"

#include "mcpclass/service/tool_admission.hpp"
#include "service/request_spans.hpp"
#include "service/tool_results.hpp"
#include "util/utf8.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>

namespace mcpclass::service {

using namespace mcpclass::classify;
namespace json = boost::json;
using detail::structured;
using detail::timed;

namespace {

// `pairs`: the classifier takes sentence pairs, so the tool offers text_pair.
json::object classify_input_schema(bool pairs) {
  auto schema = json::parse(R"j({"type":"object",
    "properties":{"text":{"type":"string","description":"The text to classify"},
                  "with_probabilities":{"type":"boolean","default":false,
                    "description":"Whether to return full probability distribution for entropy analysis"}},
    "required":["text"]})j")
                    .as_object();
  if (pairs)
    schema["properties"].as_object()["text_pair"] = json::object{
        {"type", "string"},
        {"description",
         "The second text of a sentence pair (an NLI hypothesis, the evidence of a fact check, a "
         "passage for a query), classified together with text as the model was trained"}};
  return schema;
}

json::object classify_output_schema() {
  return json::parse(R"j({"type":"object",
    "properties":{"class":{"type":"integer","minimum":0,"description":"Category index (list_categories order)"},
                  "confidence":{"type":"number","minimum":0,"maximum":1},
                  "model":{"type":"string","description":"Recommended model"},
                  "use_reasoning":{"type":"boolean"},
                  "probabilities":{"type":"array","items":{"type":"number","minimum":0,"maximum":1}},
                  "entropy":{"type":"number","minimum":0,"description":"Shannon entropy, bits"}},
    "required":["class","confidence","model","use_reasoning"]})j")
      .as_object();
}

json::object categories_output_schema() {
  return json::parse(R"j({"type":"object",
    "properties":{"categories":{"type":"array","items":{"type":"string"}},
                  "category_system_prompts":{"type":"object","additionalProperties":{"type":"string"}},
                  "category_descriptions":{"type":"object","additionalProperties":{"type":"string"}}},
    "required":["categories"]})j")
      .as_object();
}

// A response is built once, serialized once and dropped: one monotonic resource holds all of
// it (about 25 allocations of keys, strings and tables become two).
json::storage_ptr response_storage() {
  return json::make_shared_resource<json::monotonic_resource>(2048);
}

// Counts code points of valid UTF-8; nullopt when the bytes are not UTF-8.
std::optional<std::size_t> utf8_length(std::string_view s) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++count) {
    const std::size_t len = util::utf8_character_length(s.substr(i));
    if (len == 0) return std::nullopt;
    i += len;
  }
  return count;
}

}  // namespace

std::optional<std::string> text_problem(std::string_view text, std::size_t max_length) {
  const auto length = utf8_length(text);
  if (!length) return "text is not valid UTF-8";
  if (text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos) {
    return "text must not be empty";
  }
  if (*length > max_length) {
    return fmt::format("text is {} characters long; the limit is {}", *length, max_length);
  }
  return std::nullopt;
}

json::object categories_document(const CategorySet& categories) {
  json::array names;
  json::object prompts, descriptions;
  for (const auto& c : categories) {
    names.emplace_back(c.name);
    prompts[c.name] = c.system_prompt;
    descriptions[c.name] = c.description;
  }
  return json::object{{"categories", std::move(names)},
                      {"category_system_prompts", std::move(prompts)},
                      {"category_descriptions", std::move(descriptions)}};
}

namespace {

// classify_text, or a task's classify_<task>: `name` and its description's first sentence.
server::Tool classify_tool(const std::string& name, const std::string& lead,
                           std::shared_ptr<const Classifier> classifier, ToolOptions options) {
  // Rule matching takes microseconds: answering on the transport thread beats a thread hop.
  // Model inference does not, so everything else runs on the executor.
  const std::string kind = classifier->kind();
  const bool fast = kind == "rules";
  if (!options.provenance) options.provenance = classify::provenance_of(*classifier, 0);

  server::Tool classify;
  classify.name = name;
  classify.title = name == "classify_text" ? "Classify text" : "Classify text: " + name.substr(9);
  // The category names make the definition change when a reload changes the categories, so
  // clients are told (tools/list_changed) and a model reading the tool list sees the choices.
  std::string names;
  for (const auto& c : classifier->categories()) names += (names.empty() ? "" : ", ") + c.name;
  classify.description = fmt::format(
      "{} ({}) and recommend a model and whether to use reasoning. Returns {{class, confidence, "
      "model, use_reasoning}} and, with with_probabilities, the full distribution and its "
      "entropy.",
      lead, names);
  classify.input_schema = classify_input_schema(classifier->takes_pairs());
  classify.output_schema = classify_output_schema();
  classify.annotations = json::object{{"readOnlyHint", true}, {"idempotentHint", true}};
  classify.run_inline = fast;
  classify.handler = [classifier, options, kind, name](const json::object& args,
                                                       server::RequestContext& context) {
    const std::string_view text = args.at("text").get_string();
    if (auto problem = text_problem(text, options.max_text_length)) {
      return server::ToolResult::error(*problem);
    }
    std::optional<std::string_view> text_pair;
    if (const auto* p = args.if_contains("text_pair")) {
      if (!p->is_string()) return server::ToolResult::error("text_pair must be a string");
      if (!classifier->takes_pairs())
        return server::ToolResult::error(
            "this server's classifier (" + kind +
            ") classifies one text: text_pair needs a sentence-pair model (kind transformer "
            "over an NLI, fact-check or cross-encoder checkpoint)");
      text_pair = p->get_string();
      if (auto problem = text_problem(*text_pair, options.max_text_length))
        return server::ToolResult::error("text_pair: " + *problem);
    }
    bool with_probabilities = false;
    if (const auto* w = args.if_contains("with_probabilities")) with_probabilities = w->as_bool();
    // OpenTelemetry's MCP conventions name the span "{method} {tool}".
    const detail::RequestSpans trace(
        options.spans, context.trace_parent(), "tools/call " + name,
        {{"mcp.method.name", "tools/call"}, {"gen_ai.tool.name", name}});
    const auto start = util::SpanRecord::now_unix_nano();
    const Classification c = [&] {
      try {
        const ClassifyOptions call{with_probabilities, &trace.classify, trace.sink.get()};
        if (text_pair) {
          const classify::TextPair pair{text, *text_pair};
          return classifier->classify_pairs(std::span(&pair, 1), call).front();
        }
        return classifier->classify(text, call);
      } catch (const std::exception& e) {
        trace.answered(start, kind, e.what());
        throw;
      }
    }();
    trace.answered(start, kind);
    if (options.on_classified) options.on_classified(c);
    server::ToolResult result = structured(to_wire(c, with_probabilities, response_storage()));
    result.meta[classify::kMetaProvenance] = options.provenance->of(c).to_json();
    return result;
  };
  classify.handler = timed(std::move(classify.handler), options.metrics, classify.name, kind);
  // Inline calls never wait (and must not: they run on a transport thread): nothing to bound.
  if (options.admission && !fast)
    classify.admit = classify_admission(options.admission, classifier);
  return classify;
}

}  // namespace

void register_classification(server::Server& server, std::shared_ptr<const Classifier> classifier,
                             ToolOptions options) {
  const std::string kind = classifier->kind();
  server.add_tool(classify_tool("classify_text",
                                "Classify text into one of the categories of list_categories",
                                classifier, options));
  server::Tool list;
  list.name = "list_categories";
  list.title = "List categories";
  list.description =
      "List the categories classify_text chooses from (their order defines class indices), with "
      "each category's description and system prompt.";
  list.output_schema = categories_output_schema();
  list.annotations = json::object{{"readOnlyHint", true}, {"idempotentHint", true}};
  list.run_inline = true;
  list.handler = [classifier](const json::object&, server::RequestContext&) {
    return structured(categories_document(classifier->categories()));
  };
  list.handler = timed(std::move(list.handler), options.metrics, list.name, kind);
  server.add_tool(std::move(list));

  for (const auto& category : classifier->categories()) {
    server::Prompt prompt;
    prompt.name = category.name;
    prompt.title = category.name + " expert";
    prompt.description =
        fmt::format("System prompt for {} queries ({})", category.name, category.description);
    prompt.get = [text = category.system_prompt, description = prompt.description](
                     const std::map<std::string, std::string>&, server::RequestContext&) {
      return json::object{
          {"description", description},
          {"messages",
           json::array{json::object{{"role", "user"},
                                    {"content", json::object{{"type", "text"}, {"text", text}}}}}}};
    };
    server.add_prompt(std::move(prompt));
  }

  server::Resource resource;
  resource.uri = std::string(kCategoriesUri);
  resource.name = "categories";
  resource.title = "Classification categories";
  resource.description =
      "The list_categories document: names in class order, descriptions and "
      "system prompts.";
  resource.mime_type = "application/json";
  resource.read = [classifier](const std::string& uri, server::RequestContext&) {
    return json::array{
        json::object{{"uri", uri},
                     {"mimeType", "application/json"},
                     {"text", json::serialize(categories_document(classifier->categories()))}}};
  };
  server.add_resource(std::move(resource));
}

void register_task_classification(server::Server& server, const std::string& task,
                                  std::shared_ptr<const Classifier> classifier,
                                  ToolOptions options) {
  server.add_tool(classify_tool(
      "classify_" + task,
      "Classify text for the task " + task +
          " (a LoRA adapter over the model classify_text runs) into one of its labels",
      std::move(classifier), std::move(options)));
}

}  // namespace mcpclass::service
