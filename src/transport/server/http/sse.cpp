// SSE framing and the replayable event channel.
#include "transport/server/http/sse.hpp"

#include <boost/json/serialize.hpp>

#include <charconv>

namespace mcpclass::transport::server {

std::string sse_frame(std::string_view id, std::string_view event, std::string_view data,
                      unsigned retry_ms) {
  std::string out;
  out.reserve(data.size() + id.size() + event.size() + 32);
  if (!id.empty()) out.append("id: ").append(id).append("\n");
  if (!event.empty()) out.append("event: ").append(event).append("\n");
  if (retry_ms != 0) out.append("retry: ").append(std::to_string(retry_ms)).append("\n");
  // Every line of the data gets its own "data:" field.
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = data.find('\n', start);
    out.append("data: ").append(data.substr(start, nl - start)).append("\n");
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out.append("\n");
  return out;
}

std::optional<std::pair<std::string, std::uint64_t>> parse_event_id(std::string_view id) {
  const std::size_t dash = id.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  std::uint64_t seq = 0;
  const auto digits = id.substr(dash + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
  return std::make_pair(std::string(id.substr(0, dash)), seq);
}

SseChannel::SseChannel(std::string id, bool resumable, std::size_t store_limit,
                       std::shared_ptr<ReplayBudget> budget)
    : id_(std::move(id)),
      resumable_(resumable),
      store_limit_(store_limit == 0 ? 1 : store_limit),
      budget_(std::move(budget)) {}

SseChannel::~SseChannel() {
  if (budget_) budget_->release(store_bytes_);
}

std::string SseChannel::push(std::string event, std::string_view data, bool end, bool to_caller) {
  // Caller holds mutex_.
  const std::uint64_t seq = next_seq_++;
  std::string frame =
      sse_frame(resumable_ ? id_ + "-" + std::to_string(seq) : std::string(), event, data);
  if (sink_) sink_(frame, end);
  if (!resumable_) return to_caller ? std::move(frame) : std::string();
  std::string out = to_caller ? frame : std::string();
  // A frame over the stream's budget is sent, never kept. Past a budget the oldest events go
  // first; a client resuming before them is told (attach() answers kForgotten).
  if (budget_ && frame.size() > budget_->per_stream) {
    forgotten_through_ = seq;
    return out;
  }
  store_bytes_ += frame.size();
  if (budget_) budget_->charge(frame.size());
  store_.emplace_back(seq, std::move(frame));
  auto over = [&] {
    return store_.size() > store_limit_ ||
           (budget_ && (store_bytes_ > budget_->per_stream || budget_->exceeded()));
  };
  while (!store_.empty() && over()) {
    const std::size_t n = store_.front().second.size();
    store_bytes_ -= n;
    if (budget_) budget_->release(n);
    forgotten_through_ = store_.front().first;
    store_.pop_front();
  }
  return out;
}

void SseChannel::append(const boost::json::value& message) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  push("message", boost::json::serialize(message));
}

void SseChannel::append_raw(std::string_view event, std::string_view data) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  push(std::string(event), data);
}

void SseChannel::finish(std::optional<boost::json::value> final_message) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  // The last event and the end reach the sink together: one hand-over, not two.
  if (final_message) {
    push("message", boost::json::serialize(*final_message), true);
  } else if (sink_) {
    sink_(std::string(), true);
  }
  finished_ = true;
  sink_ = nullptr;
}

std::string SseChannel::finish_to_caller(std::optional<boost::json::value> final_message) {
  std::lock_guard lock(mutex_);
  if (finished_) return {};
  sink_ = nullptr;
  sink_token_ = 0;
  finished_ = true;
  if (!final_message) return {};
  return push("message", boost::json::serialize(*final_message), true, true);
}

std::uint64_t SseChannel::attach(Sink sink, std::optional<std::uint64_t> after_seq) {
  std::lock_guard lock(mutex_);
  if (after_seq && *after_seq < forgotten_through_) return kForgotten;
  if (sink_) sink_(std::string(), true);
  if (after_seq) {
    for (const auto& [seq, frame] : store_) {
      if (seq > *after_seq) sink(frame, false);
    }
  }
  if (finished_) {
    sink(std::string(), true);
    sink_ = nullptr;
    return 0;
  }
  sink_ = std::move(sink);
  sink_token_ = next_token_++;
  return sink_token_;
}

void SseChannel::detach(std::uint64_t token) {
  std::lock_guard lock(mutex_);
  if (token != 0 && token == sink_token_) {
    sink_ = nullptr;
    sink_token_ = 0;
  }
}

void SseChannel::end_sink() {
  std::lock_guard lock(mutex_);
  if (sink_) sink_(std::string(), true);
  sink_ = nullptr;
  sink_token_ = 0;
}

std::string SseChannel::priming_frame(unsigned retry_ms) const {
  std::lock_guard lock(mutex_);
  return sse_frame(resumable_ ? id_ + "-" + std::to_string(next_seq_ - 1) : std::string(), {}, {},
                   retry_ms);
}

bool SseChannel::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

bool SseChannel::attached() const {
  std::lock_guard lock(mutex_);
  return static_cast<bool>(sink_);
}

}  // namespace mcpclass::transport::server
