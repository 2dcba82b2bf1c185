#include "service/http_rerank_wire.hpp"

#include <fmt/format.h>

namespace mcpclass::service::detail {

namespace json = boost::json;

namespace {

ClassifyRefusal bad(std::string message) {
  return {400, "validation", std::move(message)};
}

std::optional<ClassifyRefusal> read_flag(const json::value& v, std::string_view key, bool& into) {
  if (!v.is_bool()) return bad(fmt::format("{} must be a boolean", key));
  into = v.get_bool();
  return std::nullopt;
}

// `texts` / `documents`: strings, or (Jina, Cohere v1) objects of one `text`.
std::optional<ClassifyRefusal> read_documents(const json::value& v, std::string_view key,
                                              bool objects, std::vector<std::string>& into) {
  const auto* list = v.if_array();
  if (list == nullptr) return bad(fmt::format("{} must be a list of strings", key));
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json::value* text = &(*list)[i];
    if (const auto* o = text->if_object(); o != nullptr && objects) {
      text = o->size() == 1 ? o->if_contains("text") : nullptr;
      if (text == nullptr)
        return bad(fmt::format(R"({}[{}] must be a string or {{"text": string}})", key, i));
    }
    if (!text->is_string()) return bad(fmt::format("{}[{}] must be a string", key, i));
    into.emplace_back(text->get_string());
  }
  return std::nullopt;
}

}  // namespace

bool is_rerank_path(std::string_view path) {
  return path == kRerankPath || path == kRerankV1Path || path == kRerankV2Path;
}

RerankRequest RerankCall::request() const {
  RerankRequest r;
  r.query = query;
  r.documents.assign(documents.begin(), documents.end());
  r.top_n = top_n;
  return r;
}

std::variant<RerankCall, ClassifyRefusal> read_rerank_call(std::string_view content_type,
                                                           std::string_view body,
                                                           std::string_view path) {
  auto parsed =
      read_json_object_body(content_type, body, R"({"query": "...", "documents": ["...", ...]})");
  if (auto* refusal = std::get_if<ClassifyRefusal>(&parsed)) return *refusal;
  const auto& o = std::get<json::object>(parsed);
  RerankCall call;
  // text-embeddings-inference's /rerank sends texts; everyone else, documents.
  call.tei = path == kRerankPath && o.contains("texts");
  const std::string_view list_key = call.tei ? "texts" : "documents";
  bool has_query = false, has_list = false;
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    const auto& v = kv.value();
    std::optional<ClassifyRefusal> refusal;
    if (key == "query") {
      if (!v.is_string()) return bad("query must be a string");
      call.query = v.get_string();
      has_query = true;
    } else if (key == list_key) {
      refusal = read_documents(v, key, !call.tei, call.documents);
      has_list = true;
    } else if (call.tei && key == "raw_scores") {
      refusal = read_flag(v, key, call.raw_scores);
    } else if (call.tei && key == "return_text") {
      refusal = read_flag(v, key, call.return_documents);
    } else if (call.tei && key == "truncate") {
      bool ignored = true;  // pairs are always truncated, longest first, as CrossEncoder does
      refusal = read_flag(v, key, ignored);
    } else if (call.tei && key == "truncation_direction") {
      if (!v.is_string() || (v.get_string() != "Right" && v.get_string() != "right"))
        return bad("truncation_direction must be Right (pairs are cut at their ends)");
    } else if (!call.tei && key == "model") {
      if (!v.is_string() && !v.is_null()) return bad("model must be a string");
    } else if (!call.tei && key == "top_n") {
      if (v.is_null()) continue;
      if (!v.is_int64() || v.get_int64() < 1) return bad("top_n must be a positive integer");
      call.top_n = static_cast<std::size_t>(v.get_int64());
    } else if (!call.tei && key == "return_documents") {
      refusal = read_flag(v, key, call.return_documents);
    } else {
      return bad(fmt::format(
          "unknown key '{}' (the body takes {})", key,
          call.tei ? "query, texts, raw_scores, return_text, truncate and truncation_direction"
                   : "model, query, documents, top_n and return_documents"));
    }
    if (refusal) return *refusal;
  }
  if (!has_query) return bad("query is required");
  if (!has_list) return bad(fmt::format("{} is required", list_key));
  return call;
}

json::value rerank_answer(const RerankCall& call, const std::vector<RankedDocument>& ranked,
                          const std::string& model) {
  const auto request = call.request();
  if (!call.tei) {
    auto out = rerank_results(ranked, request, call.return_documents);
    out["model"] = model;
    return out;
  }
  json::array out;
  for (const auto& r : ranked) {
    json::object o{{"index", r.index}, {"score", call.raw_scores ? r.score.logit : r.score.score}};
    if (call.return_documents) o["text"] = call.documents[r.index];
    out.emplace_back(std::move(o));
  }
  return out;
}

}  // namespace mcpclass::service::detail
