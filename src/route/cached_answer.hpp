// Internal: an upstream's chat completion answer as the semantic cache keeps it (its text, not
// its bytes), read from a JSON answer or an SSE stream and written back in the form a client
// asks for (docs/route.md "Semantic cache"). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::route {

/// One assistant message. Plain value.
struct CachedAnswer {
  std::string model;  ///< the upstream's "model" field
  std::string content;
  std::string finish_reason;  ///< "stop" or "length"
};

/// The answer in a chat.completion JSON body, or nullopt when it is not one the cache may keep:
/// not one choice, tool calls, no string content, a finish_reason other than stop or length.
std::optional<CachedAnswer> answer_from_json(std::string_view body);
/// The answer assembled from a chat.completion.chunk SSE stream, or nullopt unless the stream
/// is complete (a finish_reason and `data: [DONE]`) and holds one choice of text only.
std::optional<CachedAnswer> answer_from_sse(std::string_view stream);

/// A chat.completion body with `answer` as its one choice, `id` its id.
std::string answer_json(const CachedAnswer& answer, std::string_view id);
/// The SSE stream of chat.completion.chunk events a streaming upstream would have sent: the
/// role, the content, the finish_reason, then `data: [DONE]`.
std::string answer_sse(const CachedAnswer& answer, std::string_view id);

}  // namespace mcpclass::route
