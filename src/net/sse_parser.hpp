// Internal: an incremental text/event-stream parser (the WHATWG rules the MCP transports use).
// Thread-safety: one parser per stream, used by one thread at a time.
#pragma once

#include "mcpclass/util/limits.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::net {

struct SseEvent {
  std::string type = "message";  ///< `event:`; "message" when absent.
  std::string data;              ///< `data:` lines joined with '\n'.
  std::optional<std::string> id;
};

class SseParser {
 public:
  /// `max_event_bytes`: a line or an event's data longer than this makes feed() throw
  /// std::length_error, so a peer that never ends a line cannot fill memory.
  explicit SseParser(std::size_t max_event_bytes = util::limits::kMaxClientMessageBytes)
      : max_event_bytes_(max_event_bytes) {}

  /// Feeds bytes; calls `on_event` for each complete event with non-empty data. `id:` and
  /// `retry:` fields update last_event_id() and retry_ms() even on events without data (priming
  /// events).
  void feed(std::string_view chunk, const std::function<void(SseEvent)>& on_event);

  const std::optional<std::string>& last_event_id() const { return last_id_; }
  std::optional<long> retry_ms() const { return retry_; }
  /// True when any event (even empty) carried an id: the stream is resumable.
  bool saw_id() const { return last_id_.has_value(); }

 private:
  void line(std::string_view l, const std::function<void(SseEvent)>& on_event);
  [[noreturn]] void too_large() const;

  std::size_t max_event_bytes_;
  std::string pending_;
  bool skip_lf_ = false;
  SseEvent event_;
  bool has_data_ = false;
  std::optional<std::string> last_id_;
  std::optional<long> retry_;
};

}  // namespace mcpclass::net
