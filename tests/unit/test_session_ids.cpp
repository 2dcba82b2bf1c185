// Session IDs of the HTTP transport are the only credential of a session without a token, so
// they must not be predictable from the IDs other clients have seen. An mt19937_64 behind them
// (as before issue 15) falls to the attack below: untemper 312 consecutive outputs, run the
// recurrence, and the next ID is known.
#include "transport/server/http/sessions.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using mcpclass::transport::server::random_session_id;

// Inverts y ^= (y >> shift) & mask (right) or y ^= (y << shift) & mask (left).
std::uint64_t undo_right(std::uint64_t y, unsigned shift, std::uint64_t mask) {
  std::uint64_t x = y;
  for (unsigned i = 0; i < 64 / shift + 1; ++i) x = y ^ ((x >> shift) & mask);
  return x;
}
std::uint64_t undo_left(std::uint64_t y, unsigned shift, std::uint64_t mask) {
  std::uint64_t x = y;
  for (unsigned i = 0; i < 64 / shift + 1; ++i) x = y ^ ((x << shift) & mask);
  return x;
}

std::uint64_t untemper(std::uint64_t y) {
  y = undo_right(y, 43, ~0ULL);
  y = undo_left(y, 37, 0xFFF7EEE000000000ULL);
  y = undo_left(y, 17, 0x71D67FFFEDA60000ULL);
  y = undo_right(y, 29, 0x5555555555555555ULL);
  return y;
}

std::uint64_t temper(std::uint64_t y) {
  y ^= (y >> 29) & 0x5555555555555555ULL;
  y ^= (y << 17) & 0x71D67FFFEDA60000ULL;
  y ^= (y << 37) & 0xFFF7EEE000000000ULL;
  y ^= y >> 43;
  return y;
}

// The mt19937_64 output that follows `state` (the last 312 untempered outputs, oldest first).
std::uint64_t predict_next(const std::vector<std::uint64_t>& state) {
  constexpr std::size_t n = 312, m = 156;
  const std::size_t k = state.size() - n;
  const std::uint64_t x = (state[k] & 0xFFFFFFFF80000000ULL) | (state[k + 1] & 0x7FFFFFFFULL);
  std::uint64_t xa = x >> 1;
  if (x & 1) xa ^= 0xB5026F5AA96619E9ULL;
  return temper(state[k + m] ^ xa);
}

// An ID as the two 64-bit words the old generator wrote, low nibble first.
std::array<std::uint64_t, 2> words_of(const std::string& id) {
  std::array<std::uint64_t, 2> w{};
  for (int word = 0; word < 2; ++word) {
    for (int i = 15; i >= 0; --i) {
      const char c = id[static_cast<std::size_t>(word * 16 + i)];
      w[static_cast<std::size_t>(word)] =
          (w[static_cast<std::size_t>(word)] << 4) |
          static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
  }
  return w;
}

std::string id_of(std::uint64_t a, std::uint64_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (std::uint64_t bits : {a, b}) {
    for (int i = 0; i < 16; ++i, bits >>= 4) id.push_back(kHex[bits & 0xF]);
  }
  return id;
}

}  // namespace

TEST_CASE("session ids: the attack recovers an mt19937_64 (so the check below can fail)") {
  std::mt19937_64 twister(12345);
  std::vector<std::uint64_t> state;
  for (int i = 0; i < 312; ++i) state.push_back(untemper(twister()));
  const std::uint64_t a = predict_next(state);
  state.push_back(untemper(a));
  const std::uint64_t b = predict_next(state);
  const std::uint64_t first = twister();
  const std::uint64_t second = twister();
  CHECK(id_of(a, b) == id_of(first, second));
}

TEST_CASE("session ids: 128 random bits as 32 lowercase hex digits, not predictable") {
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.push_back(random_session_id());
  std::set<std::string> distinct(ids.begin(), ids.end());
  CHECK(distinct.size() == ids.size());
  std::array<int, 16> digit_counts{};
  for (const auto& id : ids) {
    REQUIRE(id.size() == 32);
    for (char c : id) {
      REQUIRE(((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')));
      ++digit_counts[static_cast<std::size_t>(c <= '9' ? c - '0' : c - 'a' + 10)];
    }
  }
  // 6,400 digits: each of the 16 values about 400 times (far outside 250..550 is not uniform).
  for (int count : digit_counts) {
    CHECK(count > 250);
    CHECK(count < 550);
  }

  // The mt19937_64 attack on 156 consecutive IDs (312 outputs) predicts none of the next ones.
  std::vector<std::uint64_t> state;
  for (std::size_t i = 0; i < 156; ++i) {
    for (std::uint64_t w : words_of(ids[i])) state.push_back(untemper(w));
  }
  const std::uint64_t a = predict_next(state);
  state.push_back(untemper(a));
  const std::string predicted = id_of(a, predict_next(state));
  for (std::size_t i = 156; i < ids.size(); ++i) CHECK(ids[i] != predicted);
}
