// util::DescriptorBudget: one limit for the descriptors its holders take and those a tracked
// counter reports open (the HTTP server's connections).
#include "mcpclass/util/descriptor_budget.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>

using mcpclass::util::DescriptorBudget;

TEST_CASE("descriptor budget: takes up to its limit, counting the tracked connections") {
  DescriptorBudget budget(10);
  auto connections = std::make_shared<std::atomic<std::size_t>>(6);
  budget.track(connections);
  CHECK(budget.in_use() == 6);
  CHECK(budget.try_acquire(3));
  CHECK(budget.try_acquire());
  CHECK_FALSE(budget.try_acquire());  // 6 + 4 = 10: spent
  CHECK(budget.in_use() == 10);
  --*connections;  // a connection closed
  CHECK(budget.try_acquire());
  budget.release(4);
  CHECK(budget.in_use() == 6);
  CHECK_FALSE(budget.try_acquire(5));  // all or nothing
  CHECK(budget.in_use() == 6);
}

TEST_CASE("descriptor budget: 0 is the descriptor limit less its reserve") {
  CHECK(DescriptorBudget().limit() == mcpclass::util::socket_descriptor_limit());
  CHECK(mcpclass::util::socket_descriptor_limit() >= 16);
}
