#include "net/sse_parser.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace mcpclass::net {

void SseParser::feed(std::string_view chunk, const std::function<void(SseEvent)>& on_event) {
  for (const char c : chunk) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      line(pending_, on_event);
      pending_.clear();
    } else {
      if (pending_.size() >= max_event_bytes_) too_large();
      pending_ += c;
    }
  }
}

void SseParser::too_large() const {
  throw std::length_error("SSE event larger than " + std::to_string(max_event_bytes_) +
                          " bytes (max_message_bytes)");
}

void SseParser::line(std::string_view l, const std::function<void(SseEvent)>& on_event) {
  if (l.empty()) {  // dispatch
    if (has_data_ && !event_.data.empty()) {
      event_.id = last_id_;
      on_event(std::move(event_));
    }
    event_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (l.front() == ':') return;  // comment
  const auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) event_.data += '\n';
    if (event_.data.size() + value.size() > max_event_bytes_) too_large();
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.type = value.empty() ? "message" : std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_ = std::string(value);
  } else if (field == "retry") {
    if (!value.empty() && value.size() < 10 && std::all_of(value.begin(), value.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch)) != 0;
        }))
      retry_ = std::stol(std::string(value));
  }
}

}  // namespace mcpclass::net
