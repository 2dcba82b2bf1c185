#include "route/upstream_lane.hpp"

#include <utility>

namespace mcpclass::route {

Lane::Lane(std::unique_ptr<net::HttpEngine> engine, std::size_t keep_alive,
           std::shared_ptr<util::DescriptorBudget> budget)
    : engine_(std::move(engine)), keep_alive_(keep_alive), budget_(std::move(budget)) {}

Lane::~Lane() {
  engine_->stop();
  if (budget_ && kept_ > 0) budget_->release(kept_);
}

bool Lane::take() {
  std::lock_guard lock(mutex_);
  if (kept_ > 0) {
    --kept_;
    return true;
  }
  return !budget_ || budget_->try_acquire();
}

void Lane::give_back(bool clean) {
  std::lock_guard lock(mutex_);
  // The engine keeps a cleanly ended exchange's connection while its pool has room.
  if (clean && kept_ < keep_alive_) {
    ++kept_;
  } else if (budget_) {
    budget_->release();
  }
}

}  // namespace mcpclass::route
