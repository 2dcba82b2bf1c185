// Internal: an upstream HttpEngine with its keep-alive pool (on a thread of its own or on a server
// I/O thread's context) and the descriptors its sockets hold, for the routing proxy's endpoints
// (backend_pool.hpp).
#pragma once

#include "mcpclass/util/descriptor_budget.hpp"
#include "net/http_client.hpp"

#include <cstddef>
#include <memory>
#include <mutex>

namespace mcpclass::route {

/// An upstream engine and the descriptors its sockets hold: one per exchange, plus one per
/// connection its pool may be keeping (counted from the exchanges that ended cleanly, so the
/// count is never below what the pool holds).
/// Thread-safety: take() and give_back() may be called from any thread.
class Lane {
 public:
  /// `budget` null: nothing is counted.
  Lane(std::unique_ptr<net::HttpEngine> engine, std::size_t keep_alive,
       std::shared_ptr<util::DescriptorBudget> budget);
  /// Stops the engine (never call it on the thread of an engine that has its own) and returns
  /// its descriptors.
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  net::HttpEngine& engine() { return *engine_; }
  /// A descriptor for one exchange: a kept connection's, else a new one from the budget. False
  /// (nothing taken) when the budget is spent.
  bool take();
  /// The exchange that take() was for ended; `clean`: its connection may have been kept.
  void give_back(bool clean);

 private:
  std::unique_ptr<net::HttpEngine> engine_;
  const std::size_t keep_alive_;
  const std::shared_ptr<util::DescriptorBudget> budget_;
  std::mutex mutex_;
  std::size_t kept_ = 0;
};

}  // namespace mcpclass::route
