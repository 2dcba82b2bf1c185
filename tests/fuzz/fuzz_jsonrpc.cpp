// libFuzzer target: the JSON-RPC parser. Any bytes → parse_json (default and tight limits) →
// from_json → to_json → serialize, and the round trip is stable: a message read back from its own
// serialization reads as the same message.
#include "mcpclass/jsonrpc/message.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

namespace {

namespace json = boost::json;
using namespace mcpclass::jsonrpc;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_jsonrpc: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_message(const json::value& v) {
  auto read = from_json(v);
  auto* message = std::get_if<Message>(&read);
  if (!message) return;  // Invalid: the engine answers it with an error, nothing to round-trip
  const json::object out = to_json(*message);
  const std::string text = json::serialize(out);
  auto again = parse_json(text);
  auto* value = std::get_if<json::value>(&again);
  if (!value) fail("own serialization does not parse", text);
  auto reread = from_json(*value);
  auto* message2 = std::get_if<Message>(&reread);
  if (!message2) fail("own serialization is not a message", text);
  // Exact: parse_json reads numbers correctly rounded and Boost.JSON writes the shortest text
  // that reads back as the same double (regressions/fuzz_jsonrpc/number-*-rounded-*).
  if (to_json(*message2) != out) fail("round trip changed the message", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_json(text);
  if (auto* v = std::get_if<json::value>(&parsed)) {
    if (const auto* batch = v->if_array()) {
      for (const auto& item : *batch) check_message(item);
    } else {
      check_message(*v);
    }
  }
  // Tight limits: depth and size errors must be clean errors, never crashes.
  (void)parse_json(text, ParseLimits{.max_bytes = 256, .max_depth = 4});
  return 0;
}
