// libFuzzer target: the JSON-RPC parser. Any bytes → parse_json (default and tight limits) →
// from_json → to_json → serialize, and the round trip is stable: a message read back from its own
// serialization reads as the same message.
#include "mcpclass/jsonrpc/message.hpp"

#include <boost/json.hpp>

#include <cmath>
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

// Equal, except that doubles may differ in their last bit: Boost.JSON 1.81 parses numbers
// imprecisely (correct rounding came with 1.83's number_precision::precise),
// so 7.7777777777777775e52 written as "7.777777777777777E52" reads back one ULP lower
// (regressions/fuzz_jsonrpc/ double-reads-back-one-ulp-off). Everything else must match exactly.
bool same(const json::value& a, const json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.get_double(), y = b.get_double();
    return x == y || std::nextafter(x, y) == y;
  }
  if (a.kind() != b.kind()) return false;
  if (const auto* arr = a.if_array()) {
    const auto& other = b.get_array();
    if (arr->size() != other.size()) return false;
    for (std::size_t i = 0; i < arr->size(); ++i)
      if (!same((*arr)[i], other[i])) return false;
    return true;
  }
  if (const auto* obj = a.if_object()) {
    const auto& other = b.get_object();
    if (obj->size() != other.size()) return false;
    for (const auto& member : *obj) {
      const auto* v = other.if_contains(member.key());
      if (!v || !same(member.value(), *v)) return false;
    }
    return true;
  }
  return a == b;
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
  if (!same(to_json(*message2), out)) fail("round trip changed the message", text);
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
