// util::AdmissionGate: places bounded by count, refusals at once, FIFO turns, deadlines.
#include "mcpclass/util/admission_gate.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

using mcpclass::util::AdmissionGate;
using mcpclass::util::AdmissionOptions;
using mcpclass::util::AdmissionRefusal;
using namespace std::chrono_literals;
using Clock = AdmissionGate::Clock;

namespace {

std::shared_ptr<AdmissionGate> gate(std::size_t running, std::size_t queued) {
  return std::make_shared<AdmissionGate>(
      AdmissionOptions{.max_concurrent = running, .max_queue = queued, .retry_after = 1s});
}

}  // namespace

TEST_CASE("admission gate refuses at once beyond its running slots and queue places") {
  auto g = gate(2, 1);
  auto a = g->admit(std::nullopt);
  auto b = g->admit(std::nullopt);
  auto c = g->admit(std::nullopt);
  REQUIRE(a.ticket);
  REQUIRE(b.ticket);
  REQUIRE(c.ticket);
  const auto t0 = Clock::now();
  auto d = g->admit(std::nullopt);
  CHECK(Clock::now() - t0 < 100ms);
  CHECK_FALSE(d.ticket);
  CHECK(d.refusal == AdmissionRefusal::rejected);
  // A freed place is taken again.
  a.ticket.reset();
  CHECK(g->admit(std::nullopt).ticket);
  const auto n = g->counts();
  CHECK(n.offered == 5);
  CHECK(n.admitted == 4);
  CHECK(n.rejected == 1);
  CHECK(n.expired == 0);
  CHECK(g->limits_text() == "2 running and 1 queued");
}

TEST_CASE("admission gate runs at most max_concurrent and hands slots out in order") {
  auto g = gate(1, 3);
  auto first = g->admit(std::nullopt);
  REQUIRE(first.ticket->start() == AdmissionRefusal::none);
  std::vector<std::unique_ptr<AdmissionGate::Ticket>> waiting;
  for (int i = 0; i < 3; ++i) waiting.push_back(std::move(g->admit(std::nullopt).ticket));
  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      CHECK(waiting[i]->start() == AdmissionRefusal::none);
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      CHECK(g->counts().running == 1);
      waiting[i].reset();
    });
    // Each waiter queues before the next one is started.
    while (g->counts().queued != static_cast<std::size_t>(i + 1)) std::this_thread::yield();
  }
  CHECK(g->counts().running == 1);
  first.ticket.reset();
  for (auto& t : threads) t.join();
  CHECK(order == std::vector<int>{0, 1, 2});
  const auto n = g->counts();
  CHECK(n.started == 4);
  CHECK(n.running == 0);
  CHECK(n.queued == 0);
}

TEST_CASE("admission gate drops work whose deadline passed before it would start") {
  auto g = gate(1, 1);
  // Already due: refused by admit(), counted as expired.
  auto late = g->admit(Clock::now() - 1ms);
  CHECK_FALSE(late.ticket);
  CHECK(late.refusal == AdmissionRefusal::expired);

  auto running = g->admit(std::nullopt);
  REQUIRE(running.ticket->start() == AdmissionRefusal::none);
  // Queued behind it with 50 ms to go: dropped at its deadline, not when the slot frees.
  auto queued = g->admit(Clock::now() + 50ms);
  REQUIRE(queued.ticket);
  const auto t0 = Clock::now();
  CHECK(queued.ticket->start() == AdmissionRefusal::expired);
  const auto waited = Clock::now() - t0;
  CHECK(waited >= 40ms);
  CHECK(waited < 2s);
  queued.ticket.reset();  // its place was already given back
  const auto n = g->counts();
  CHECK(n.expired == 2);
  CHECK(n.admitted == 2);
  CHECK(n.started == 1);
  // The queue place is free again.
  CHECK(g->admit(std::nullopt).ticket);
}

TEST_CASE("admission gate drops work that would finish past its deadline at the recent run time") {
  auto g = gate(1, 1);
  {
    auto t = g->admit(std::nullopt);
    REQUIRE(t.ticket->start() == AdmissionRefusal::none);
    std::this_thread::sleep_for(100ms);
    t.ticket->succeeded();
  }
  CHECK(g->counts().estimated_run_time >= 100ms);
  CHECK(g->counts().classified == 1);
  // 30 ms left cannot hold a 100 ms run: dropped without starting.
  auto short_deadline = g->admit(Clock::now() + 30ms);
  REQUIRE(short_deadline.ticket);
  CHECK(short_deadline.ticket->start() == AdmissionRefusal::expired);
  // 5 s left can.
  auto long_deadline = g->admit(Clock::now() + 5s);
  CHECK(long_deadline.ticket->start() == AdmissionRefusal::none);
}

TEST_CASE("admission gate without max_concurrent admits everything and checks only deadlines") {
  auto g = gate(0, 0);
  std::vector<std::unique_ptr<AdmissionGate::Ticket>> tickets;
  for (int i = 0; i < 100; ++i) {
    auto a = g->admit(std::nullopt);
    REQUIRE(a.ticket);
    CHECK(a.ticket->start() == AdmissionRefusal::none);
    tickets.push_back(std::move(a.ticket));
  }
  CHECK(g->counts().running == 100);
  CHECK(g->admit(Clock::now() - 1ms).refusal == AdmissionRefusal::expired);
  tickets.clear();
  CHECK(g->counts().running == 0);
}

TEST_CASE("admission gate under many threads never runs more than its limit") {
  auto g = gate(3, 5);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> ran{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        auto a = g->admit(Clock::now() + 2s);
        if (!a.ticket) {
          ++refused;
          continue;
        }
        if (a.ticket->start() != AdmissionRefusal::none) continue;
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(100us);
        --running;
        ++ran;
        a.ticket->succeeded();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(most.load() <= 3);
  const auto n = g->counts();
  CHECK(n.offered == 800);
  CHECK(n.rejected == static_cast<std::uint64_t>(refused.load()));
  CHECK(n.classified == static_cast<std::uint64_t>(ran.load()));
  CHECK(n.admitted + n.rejected + (n.expired - (n.admitted - n.started)) == n.offered);
  CHECK(n.running == 0);
  CHECK(n.queued == 0);
}
