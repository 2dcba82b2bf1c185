// Open GET SSE streams, counted in all and per client address, so one client cannot hold every
// slot (its streams beyond its share get 503 while other clients still get theirs).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <cstddef>
#include <map>
#include <mutex>

namespace mcpclass::transport::server {

class StreamSlots {
 public:
  /// `per_client` 0 = no per-address limit.
  StreamSlots(std::size_t total, std::size_t per_client) : total_(total), per_client_(per_client) {}

  /// Takes a slot for `client`; false, taking nothing, when either limit is reached.
  bool try_open(const boost::asio::ip::address& client) {
    std::lock_guard lock(mutex_);
    if (open_ >= total_) return false;
    std::size_t& mine = by_client_[client];
    if (per_client_ != 0 && mine >= per_client_) return false;
    ++mine;
    ++open_;
    return true;
  }
  /// Gives back a slot try_open() took.
  void close(const boost::asio::ip::address& client) {
    std::lock_guard lock(mutex_);
    auto it = by_client_.find(client);
    if (it == by_client_.end()) return;
    if (--it->second == 0) by_client_.erase(it);
    --open_;
  }
  std::size_t open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }

 private:
  const std::size_t total_;
  const std::size_t per_client_;
  mutable std::mutex mutex_;
  std::size_t open_ = 0;
  std::map<boost::asio::ip::address, std::size_t> by_client_;
};

}  // namespace mcpclass::transport::server
