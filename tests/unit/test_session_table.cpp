// The HTTP session table: a session a request has acquired is never evicted under it (issue 15:
// evicted between lookup and use, a request answered "session closed" instead of 404).
#include "transport/server/http/sessions.hpp"

#include "mcpclass/server/server.hpp"
#include "mcpclass/util/executor.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <memory>

using namespace mcpclass;
using transport::server::HttpSession;
using transport::server::HttpSessionTable;

namespace {
struct Table {
  util::ThreadPool pool{1};
  std::shared_ptr<server::Server> server = server::Server::create({}, pool.executor());
  HttpSessionTable table{server, 1, 16, 2048,
                         std::make_shared<transport::server::ReplayBudget>(1024, 4096)};
};
const auto kLater = HttpSession::Clock::now() + std::chrono::hours(1);
}  // namespace

TEST_CASE("session table: an acquired session is not evicted until its request ends") {
  Table t;
  auto entry = t.table.create(false);
  REQUIRE(entry);
  auto held = t.table.acquire(entry->id);
  REQUIRE(held == entry);
  CHECK(t.table.evict_idle(kLater) == 0);
  CHECK_FALSE(t.table.create(false));  // full, and the only session is busy
  held->end();
  CHECK(t.table.evict_idle(kLater) == 1);
  CHECK_FALSE(t.table.acquire(entry->id));
  CHECK(entry->session->state() == server::Session::State::closed);
}

TEST_CASE("session table: at the limit the idle session gives way to a new one") {
  Table t;
  auto first = t.table.create(false);
  REQUIRE(first);
  auto second = t.table.create(false);
  REQUIRE(second);
  CHECK_FALSE(t.table.find(first->id));
  CHECK(first->session->state() == server::Session::State::closed);
}
