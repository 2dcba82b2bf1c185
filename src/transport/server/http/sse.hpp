// One logical SSE stream: numbered events, a bounded store for `Last-Event-ID` replay, and the
// connection currently writing it (the sink). The stream outlives connections, so a client whose
// connection dropped can resume it with a new GET.
// Thread-safety: every method may be called from any thread; the sink is called under the
// channel's lock, so it must only hand the frame over (post it), never call back.
#pragma once

#include <boost/json/value.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace mcpclass::transport::server {

/// Formats one SSE event; empty `id`/`event` are left out, `retry` 0 too.
std::string sse_frame(std::string_view id, std::string_view event, std::string_view data,
                      unsigned retry_ms = 0);

/// Splits a `Last-Event-ID` of the form "<stream>-<seq>".
std::optional<std::pair<std::string, std::uint64_t>> parse_event_id(std::string_view id);

/// Bytes replay stores may hold: each stream (`per_stream`), and all streams charged to this
/// budget together (`total`): one budget per session, whose `parent` is the server's. When a
/// budget or an ancestor runs out, the channel that grows forgets its oldest events.
struct ReplayBudget {
  ReplayBudget(std::size_t per_stream_bytes, std::size_t total_bytes,
               std::shared_ptr<ReplayBudget> parent_budget = nullptr)
      : per_stream(per_stream_bytes), total(total_bytes), parent(std::move(parent_budget)) {}
  const std::size_t per_stream;
  const std::size_t total;
  const std::shared_ptr<ReplayBudget> parent;
  std::atomic<std::size_t> used{0};

  void charge(std::size_t bytes) {
    for (ReplayBudget* b = this; b != nullptr; b = b->parent.get()) b->used += bytes;
  }
  void release(std::size_t bytes) {
    for (ReplayBudget* b = this; b != nullptr; b = b->parent.get()) b->used -= bytes;
  }
  /// This budget or an ancestor holds more than its total.
  bool exceeded() const {
    for (const ReplayBudget* b = this; b != nullptr; b = b->parent.get())
      if (b->used > b->total) return true;
    return false;
  }
};

class SseChannel {
 public:
  /// Receives a frame to write; `end` = the stream is over after it (frame may be empty).
  using Sink = std::function<void(std::string frame, bool end)>;

  /// `resumable` channels put ids on events and keep the last `store_limit` of them, within
  /// `budget` (bytes; none = only the count bounds them).
  SseChannel(std::string id, bool resumable, std::size_t store_limit,
             std::shared_ptr<ReplayBudget> budget = nullptr);
  /// Gives the stored bytes back to the budget.
  ~SseChannel();
  SseChannel(const SseChannel&) = delete;
  SseChannel& operator=(const SseChannel&) = delete;

  const std::string& id() const { return id_; }
  bool resumable() const { return resumable_; }

  /// Appends a JSON-RPC message as an `event: message`. Ignored once finished.
  void append(const boost::json::value& message);
  /// Appends a named event with raw data (the legacy `endpoint` event).
  void append_raw(std::string_view event, std::string_view data);
  /// The last event (if any), then the end of the stream. Idempotent.
  void finish(std::optional<boost::json::value> final_message = std::nullopt);
  /// finish(), except that the sink is dropped and the last frame (the final message's event, or
  /// "" without one) is returned to the caller to write: the caller is the sink's own connection,
  /// already on its strand, with nothing of this channel still on its way there.
  std::string finish_to_caller(std::optional<boost::json::value> final_message);

  /// attach()'s answer when events after `after_seq` were forgotten (past a budget): the replay
  /// would have a gap, so nothing is attached.
  static constexpr std::uint64_t kForgotten = ~std::uint64_t{0};
  /// Makes `sink` the writer: first the stored events after `after_seq` (all when 0, none when
  /// nullopt), then every new one; a finished channel ends the sink right away. A previous sink is
  /// ended. Returns a token for detach(), or kForgotten.
  std::uint64_t attach(Sink sink, std::optional<std::uint64_t> after_seq);
  /// Forgets the sink if `token` still names it (its connection is gone).
  void detach(std::uint64_t token);
  /// Ends the current sink without finishing the channel (shutdown, session deleted).
  void end_sink();

  /// An event with empty data whose id names the current position (resume from here), plus retry.
  std::string priming_frame(unsigned retry_ms) const;
  bool finished() const;
  bool attached() const;

 private:
  /// Stores and sends one event; `end`: the sink is told in the same call that it was the last.
  /// `to_caller`: the frame is returned too (and not handed to the sink, which the caller dropped).
  std::string push(std::string event, std::string_view data, bool end = false,
                   bool to_caller = false);

  const std::string id_;
  const bool resumable_;
  const std::size_t store_limit_;
  const std::shared_ptr<ReplayBudget> budget_;
  std::size_t store_bytes_ = 0;
  mutable std::mutex mutex_;
  std::uint64_t next_seq_ = 1;
  std::deque<std::pair<std::uint64_t, std::string>> store_;
  std::uint64_t forgotten_through_ = 0;  // the last event dropped from (or never put in) store_
  bool finished_ = false;
  Sink sink_;
  std::uint64_t sink_token_ = 0;
  std::uint64_t next_token_ = 1;
};

}  // namespace mcpclass::transport::server
