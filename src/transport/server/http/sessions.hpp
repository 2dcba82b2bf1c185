// The sessions an HTTP server keeps: Mcp-Session-Id → engine session, its standalone SSE stream
// and the resumable streams of its POSTs; limits and idle eviction. Also tracks the throwaway
// sessions of stateless and router requests so shutdown can cancel them.
// Thread-safety: every method may be called from any thread.
#pragma once

#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/sse.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace mcpclass::transport::server {

struct HttpSession {
  using Clock = std::chrono::steady_clock;

  std::string id;
  bool legacy = false;  ///< Created by GET /sse; lives as long as that stream.
  std::shared_ptr<mcpclass::server::Session> session;
  /// GET /mcp (or the legacy GET /sse) stream; also where messages go that a POST cannot carry.
  std::shared_ptr<SseChannel> standalone;

  /// The replay bytes of all this session's streams (its parent is the server's budget).
  std::shared_ptr<ReplayBudget> replay_budget;

  /// A new resumable stream for a POST, keeping `store_limit` events within the session's replay
  /// budget; registered so a GET with Last-Event-ID finds it.
  std::shared_ptr<SseChannel> open_channel(std::size_t store_limit);
  /// The stream `channel_id` names; nullptr when unknown, with `forgotten` set when this session
  /// did open it but dropped it since (finished, past the replay budget or the kept-stream count).
  std::shared_ptr<SseChannel> find_channel(const std::string& channel_id, bool& forgotten);

  /// Marks a request start / end (busy sessions are never evicted).
  void begin();
  void end();
  bool idle_since(Clock::time_point cutoff) const;
  Clock::time_point last_used() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<SseChannel>> channels_;  // by number: oldest first
  std::uint64_t next_channel_ = 1;
  int active_ = 0;
  Clock::time_point last_used_ = Clock::now();
};

class HttpSessionTable {
 public:
  HttpSessionTable(std::shared_ptr<mcpclass::server::Server> server, std::size_t max_sessions,
                   std::size_t event_store_size, std::size_t session_replay_bytes,
                   std::shared_ptr<ReplayBudget> budget, std::string id_prefix = {});

  /// A new session with a fresh random id; nullptr when full and nothing idle can be evicted.
  std::shared_ptr<HttpSession> create(bool legacy);
  std::shared_ptr<HttpSession> find(const std::string& id) const;
  /// find() and begin() in one step, so the session cannot be evicted between the lookup and
  /// the request that uses it; the caller ends it (RequestGuard adopts it).
  std::shared_ptr<HttpSession> acquire(const std::string& id);
  /// Removes and closes the session (its streams end). Returns false for an unknown id.
  bool remove(const std::string& id);
  /// Closes sessions idle since before `cutoff` (legacy ones live while their stream does).
  std::size_t evict_idle(HttpSession::Clock::time_point cutoff);
  std::size_t size() const;

  /// Throwaway sessions of stateless / router requests.
  void add_transient(const std::shared_ptr<mcpclass::server::Session>& session);
  void remove_transient(const std::shared_ptr<mcpclass::server::Session>& session);

  /// Ends every standalone stream (shutdown, first step).
  void end_streams();
  /// Closes every session, transient ones too. New sessions are refused afterwards.
  void close_all();

 private:
  void close_entry(const std::shared_ptr<HttpSession>& entry);

  std::shared_ptr<mcpclass::server::Server> server_;
  const std::size_t max_sessions_;
  const std::size_t event_store_size_;
  const std::size_t session_replay_bytes_;
  const std::shared_ptr<ReplayBudget> budget_;
  const std::string id_prefix_;  // HttpServerOptions::session_id_prefix
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions_;
  std::set<std::shared_ptr<mcpclass::server::Session>> transient_;
  bool closed_ = false;
};

/// 128 random bits as 32 hex digits.
std::string random_session_id();

}  // namespace mcpclass::transport::server
