// The remote token classifier: one tools/call per text, its spans checked against the text.
#include "mcpclass/remote/remote_token_classifier.hpp"

#include "remote/remote_detail.hpp"
#include "remote/tool_session.hpp"

#include <fmt/format.h>

namespace mcpclass::remote {

namespace {

constexpr std::string_view kDefaultTool = "detect_pii";

// The byte offset of every code point boundary of `text` (size: code points + 1), or empty when
// the text is not UTF-8 the server could have counted.
std::vector<std::size_t> code_point_offsets(std::string_view text) {
  std::vector<std::size_t> offsets;
  offsets.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) offsets.push_back(i);
  offsets.push_back(text.size());
  return offsets;
}

bool boundary(std::string_view text, std::size_t byte) {
  return byte == text.size() ||
         (byte < text.size() && (static_cast<unsigned char>(text[byte]) & 0xC0) != 0x80);
}

std::size_t index_of(const json::object& span, std::string_view key, std::size_t i) {
  const auto* v = span.if_contains(key);
  if (v == nullptr || !(v->is_int64() || v->is_uint64()) || (v->is_int64() && v->as_int64() < 0))
    throw RemoteInvalidResult(fmt::format("span {}: '{}' must be a non-negative integer", i, key));
  return v->is_int64() ? static_cast<std::size_t>(v->as_int64())
                       : static_cast<std::size_t>(v->as_uint64());
}

learned::TokenSpan parse_span(const json::value& value, std::size_t i, std::string_view text,
                              const std::vector<std::size_t>& offsets) {
  if (!value.is_object()) throw RemoteInvalidResult(fmt::format("span {} is not an object", i));
  const auto& o = value.get_object();
  learned::TokenSpan span;
  const auto* label = o.if_contains("entity_group");
  if (label == nullptr) label = o.if_contains("entity");
  if (label == nullptr || !label->is_string() || label->get_string().empty())
    throw RemoteInvalidResult(fmt::format("span {} has no entity_group or entity", i));
  span.label = label->get_string();
  const auto* score = o.if_contains("score");
  if (score == nullptr || !score->is_number() || !(score->to_number<double>() >= 0.0) ||
      score->to_number<double>() > 1.0)
    throw RemoteInvalidResult(fmt::format("span {}: 'score' must be a number in [0, 1]", i));
  span.score = score->to_number<double>();
  if (const auto* word = o.if_contains("word"); word != nullptr && word->is_string())
    span.word = word->get_string();
  span.start = index_of(o, "start", i);
  span.end = index_of(o, "end", i);
  if (span.start > span.end || span.end >= offsets.size())
    throw RemoteInvalidResult(fmt::format(
        "span {}: start {} and end {} do not lie in order within the text's {} characters", i,
        span.start, span.end, offsets.size() - 1));
  if (o.contains("byte_start") || o.contains("byte_end")) {
    span.byte_start = index_of(o, "byte_start", i);
    span.byte_end = index_of(o, "byte_end", i);
    if (span.byte_start > span.byte_end || !boundary(text, span.byte_start) ||
        !boundary(text, span.byte_end) || span.byte_start != offsets[span.start] ||
        span.byte_end != offsets[span.end])
      throw RemoteInvalidResult(fmt::format(
          "span {}: byte_start {} and byte_end {} are not the UTF-8 bytes of characters {} to {}",
          i, span.byte_start, span.byte_end, span.start, span.end));
  } else {
    span.byte_start = offsets[span.start];
    span.byte_end = offsets[span.end];
  }
  return span;
}

}  // namespace

struct RemoteTokenClassifier::Impl {
  RemoteClassifierOptions options;
  std::string tool;
  std::vector<std::string> labels;  // always empty
  detail::ToolSession session;

  Impl(RemoteClassifierOptions o, std::shared_ptr<client::ClientTransport> t)
      : options(std::move(o)),
        tool(options.tool.empty() ? std::string(kDefaultTool) : options.tool),
        session(options, std::move(t), "mcpclass-remote-token-classifier",
                [this] { check_tool(); }) {}

  // The configured tool must exist; the error lists the server's tools.
  void check_tool() { (void)discover_classification_tool(session.list_tools(), tool); }

  std::vector<learned::TokenSpan> attempt(std::string_view text,
                                          std::optional<learned::TokenAggregation> aggregation) {
    json::object args{{"text", text}};
    if (aggregation) args["aggregation"] = learned::to_string(*aggregation);
    const json::object payload = detail::tool_payload(session.call_tool(tool, args), tool);
    const auto* spans = payload.if_contains("spans");
    if (spans == nullptr || !spans->is_array())
      throw RemoteInvalidResult(
          fmt::format("{}: the result of '{}' has no 'spans' list", session.where(), tool));
    const auto offsets = code_point_offsets(text);
    std::vector<learned::TokenSpan> out;
    out.reserve(spans->get_array().size());
    for (std::size_t i = 0; i < spans->get_array().size(); ++i)
      out.push_back(parse_span(spans->get_array()[i], i, text, offsets));
    return out;
  }
};

RemoteTokenClassifier::RemoteTokenClassifier(RemoteClassifierOptions options)
    : RemoteTokenClassifier(options, make_remote_transport(options)) {}

RemoteTokenClassifier::RemoteTokenClassifier(RemoteClassifierOptions options,
                                             std::shared_ptr<client::ClientTransport> transport)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(transport))) {
  impl_->session.connect_with_retries();
}

RemoteTokenClassifier::~RemoteTokenClassifier() = default;

std::vector<learned::TokenSpan> RemoteTokenClassifier::detect(
    std::string_view text, std::optional<learned::TokenAggregation> aggregation) const {
  std::vector<learned::TokenSpan> out;
  impl_->session.call([&] { out = impl_->attempt(text, aggregation); });
  return out;
}

learned::TokenAggregation RemoteTokenClassifier::aggregation() const {
  return learned::TokenAggregation::simple;
}

const std::vector<std::string>& RemoteTokenClassifier::labels() const {
  return impl_->labels;
}

json::object RemoteTokenClassifier::info() const {
  json::object out = impl_->session.stats();
  out["kind"] = "remote";
  out["tool"] = impl_->tool;
  return out;
}

}  // namespace mcpclass::remote
