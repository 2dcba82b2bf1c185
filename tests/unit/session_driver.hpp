// Drives a server::Session by hand in tests: a Stream that keeps what it gets, and initialize.
#pragma once

#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace mcpclass::test {

namespace json = boost::json;
using namespace std::chrono_literals;
using mcpclass::server::Session;
using mcpclass::server::Stream;

class CollectingStream final : public Stream {
 public:
  void send(json::value message) override {
    std::lock_guard lock(mutex_);
    sent.push_back(std::move(message));
    cv_.notify_all();
  }
  void close(std::optional<json::value> final_message) override {
    std::lock_guard lock(mutex_);
    ++closes;
    final = std::move(final_message);
    cv_.notify_all();
  }
  bool wait_closed(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return closes > 0; });
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<json::value> sent;
  std::optional<json::value> final;
  int closes = 0;
};

// Session::handle has a text and a JSON overload; a string literal would fit both.
inline void deliver(Session& session, std::string_view text,
                    const mcpclass::server::StreamPtr& out) {
  session.handle(text, out);
}

inline void initialize(Session& session, std::string_view version = "2025-06-18") {
  auto s = std::make_shared<CollectingStream>();
  deliver(
      session,
      json::serialize(json::object{
          {"jsonrpc", "2.0"},
          {"id", 0},
          {"method", "initialize"},
          {"params", json::object{{"protocolVersion", version},
                                  {"capabilities", json::object{}},
                                  {"clientInfo", json::object{{"name", "t"}, {"version", "1"}}}}}}),
      s);
  REQUIRE(s->wait_closed(5s));
  deliver(session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
          std::make_shared<CollectingStream>());
}

}  // namespace mcpclass::test
