// BOOST_ASSERT's handler for the builds that keep assertions (Debug: the top-level CMakeLists.txt
// defines BOOST_ENABLE_ASSERT_DEBUG_HANDLER there; the fuzz build: BOOST_ENABLE_ASSERT_HANDLER).
// Every failed assertion aborts, as assert() would, except one that is wrong. Beast 1.81 asserts
// `n >= 5` in basic_parser::parse_chunk_header once the last chunk was seen, but 3 or 4 buffered
// bytes are valid there when no CRLF is expected ("0\r\n" then "\r"): the code after it looks for
// the end of the trailer and asks for more data, as it should. Upstream fixed the assertion
// (boostorg/beast#2861, Boost 1.86). Before this handler, an empty chunked body sent as "0\r\n",
// "\r", "\n" aborted a Debug `mcpclass serve` with no token needed, and an upstream answering so
// aborted a Debug client; fuzz_http_client found it after 0.87M executions.
//
// Weak, so that an application that links the library and defines its own handler keeps it.
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace boost {

[[gnu::weak]] void assertion_failed(char const* expr, char const* function, char const* file,
                                    long line) {
  if (std::string_view(expr) == "n >= 5" &&
      std::string_view(function).find("parse_chunk_header") != std::string_view::npos)
    return;
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

[[gnu::weak]] void assertion_failed_msg(char const* expr, char const* msg, char const* function,
                                        char const* file, long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost
