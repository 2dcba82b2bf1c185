// JSON-RPC 2.0 parsing and writing: unit tests and property tests on random, truncated and
// mutated input. Every random generator is seeded with a fixed value so failures reproduce.
#include "mcpclass/jsonrpc/message.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <boost/json.hpp>

#include <charconv>
#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace {

namespace json = boost::json;
namespace rpc = mcpclass::jsonrpc;

json::value parsed(std::string_view text, const rpc::ParseLimits& limits = {}) {
  auto r = rpc::parse_json(text, limits);
  REQUIRE(std::holds_alternative<json::value>(r));
  return std::get<json::value>(r);
}

rpc::Error parse_failure(std::string_view text, const rpc::ParseLimits& limits = {}) {
  auto r = rpc::parse_json(text, limits);
  REQUIRE(std::holds_alternative<rpc::Error>(r));
  return std::get<rpc::Error>(r);
}

rpc::Message message(std::string_view text) {
  auto r = rpc::from_json(parsed(text));
  if (auto* invalid = std::get_if<rpc::Invalid>(&r)) FAIL(invalid->error.message);
  return std::get<rpc::Message>(r);
}

rpc::Invalid invalid(std::string_view text) {
  auto r = rpc::from_json(parsed(text));
  REQUIRE(std::holds_alternative<rpc::Invalid>(r));
  return std::get<rpc::Invalid>(r);
}

std::string nested(std::size_t depth, bool balanced = true) {
  std::string s(depth, '[');
  if (balanced) s.append(depth, ']');
  return s;
}

// Valid messages of every kind: the seeds of the truncation and mutation properties.
const std::vector<std::string> kValidMessages = {
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}})",
    R"({"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi \u00e9 \"q\""},"_meta":{"progressToken":7}}})",
    R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc","reason":"x"}})",
    R"({"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}})",
    R"({"jsonrpc":"2.0","id":9223372036854775807,"error":{"code":-32602,"message":"bad","data":{"uri":"test://x"}}})",
    R"({"jsonrpc":"2.0","id":-3,"method":"ping"})",
    R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1,2.5e3,true,false,null,{"a":[]}]})",
    R"([{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}])",
};

// Checks the contract of parse_json + from_json on arbitrary text: a value or a clean parse
// error; for a value, a message or a clean invalid-request error; for a message, a stable
// round trip through to_json.
void check_clean(std::string_view text, const rpc::ParseLimits& limits = {}) {
  auto r = rpc::parse_json(text, limits);
  if (const auto* e = std::get_if<rpc::Error>(&r)) {
    REQUIRE(e->code == rpc::kParseError);
    REQUIRE(e->message.rfind("Parse error", 0) == 0);
    return;
  }
  const json::value& v = std::get<json::value>(r);
  auto m = rpc::from_json(v);
  if (const auto* bad = std::get_if<rpc::Invalid>(&m)) {
    REQUIRE(bad->error.code == rpc::kInvalidRequest);
    REQUIRE_FALSE(bad->error.message.empty());
    // The error can always be written back as a response.
    const json::object reply = rpc::make_error(bad->id, bad->error);
    REQUIRE(reply.at("error").at("code").as_int64() == rpc::kInvalidRequest);
    return;
  }
  const rpc::Message& msg = std::get<rpc::Message>(m);
  const json::object written = rpc::to_json(msg);
  auto again = rpc::from_json(written);
  REQUIRE(std::holds_alternative<rpc::Message>(again));
  REQUIRE(rpc::to_json(std::get<rpc::Message>(again)) == written);
}

json::value random_json(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 4 : 6);
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return std::bernoulli_distribution(0.5)(rng);
    case 2:
      return static_cast<std::int64_t>(rng());
    case 3:
      // Multiples of 1/1024: exact in binary, so text round trips do not depend on the last
      // digit of Boost.JSON 1.81's (not correctly rounded) number parser.
      return static_cast<double>(static_cast<std::int64_t>(rng() % 2'000'000) - 1'000'000) / 1024.0;
    case 4: {
      std::string s;
      const std::size_t n = rng() % 12;
      for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(' ' + rng() % 95));
      if (rng() % 4 == 0) s += "\xc3\xa9\n\t\"\\";
      return json::value(s);
    }
    case 5: {
      json::array a;
      const std::size_t n = rng() % 5;
      for (std::size_t i = 0; i < n; ++i) a.push_back(random_json(rng, depth + 1));
      return a;
    }
    default: {
      json::object o;
      const std::size_t n = rng() % 5;
      static const char* keys[] = {"jsonrpc", "id",      "method", "params", "result", "error",
                                   "code",    "message", "data",   "_meta",  "x"};
      for (std::size_t i = 0; i < n; ++i) o[keys[rng() % 11]] = random_json(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("jsonrpc: parse_json reads JSON and reports errors as kParseError") {
  CHECK(parsed(R"({"a":[1,"x",null]})") == json::parse(R"({"a":[1,"x",null]})"));
  CHECK(parsed(" 42 ") == json::value(42));
  for (const char* bad : {"", " ", "{", "}", "[1,]", "{\"a\":}", "nul", "\"open", "{'a':1}",
                          "[1] [2]", "01", "{\"a\":1,}", "\x80\x81"}) {
    CAPTURE(bad);
    const rpc::Error e = parse_failure(bad);
    CHECK(e.code == rpc::kParseError);
    CHECK(e.message.rfind("Parse error", 0) == 0);
    CHECK_FALSE(e.data);
  }
}

TEST_CASE("jsonrpc: the size limit turns a large message into a clean parse error") {
  const rpc::ParseLimits limits{.max_bytes = 100, .max_depth = 64};
  const std::string ok = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  CHECK(parsed(ok, limits).is_object());
  const std::string big = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" +
                          std::string(200, 'x') + R"("}})";
  const rpc::Error e = parse_failure(big, limits);
  CHECK(e.code == rpc::kParseError);
  CHECK(e.message.find("exceeds the limit of 100 bytes") != std::string::npos);
  // Exactly at the limit passes.
  const std::string exact = "\"" + std::string(98, 'y') + "\"";
  REQUIRE(exact.size() == 100);
  CHECK(parsed(exact, limits).is_string());
  // The default limit is 4 MiB.
  const std::string huge = "\"" + std::string(4 * 1024 * 1024, 'z') + "\"";
  CHECK(parse_failure(huge).code == rpc::kParseError);
}

TEST_CASE("jsonrpc: a number beyond double's range is a clean parse error, not infinity") {
  // Found by fuzz_jsonrpc (tests/fuzz/regressions/fuzz_jsonrpc/number-overflows-to-infinity):
  // read as infinity, the message serialized as `Infinity`, which is not JSON.
  for (const std::string text :
       {R"({"jsonrpc":"2.0","method":"l","params":[1e9991]})",
        R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"b":-1e400}}})", R"(1e309)"}) {
    CAPTURE(text);
    const rpc::Error e = parse_failure(text);
    CHECK(e.code == rpc::kParseError);
    CHECK(e.message == "Parse error: a number is out of range (beyond ±1.8e308)");
  }
  // The largest doubles and tiny ones (which round to 0 or subnormals) are fine.
  CHECK(parsed(R"([1.7976931348623157e308, -1.7976931348623157e308, 1e-400])").is_array());
}

TEST_CASE("jsonrpc: numbers are read correctly rounded and survive a round trip unchanged") {
  // Found by fuzz.smoke (tests/fuzz/regressions/fuzz_jsonrpc/number-e200-rounded-down and
  // number-e198-rounded-up): Boost.JSON 1.81 read these a bit off the nearest double, and the
  // message's serialization read back as yet another number.
  for (const std::string number :
       {"7.77777711111111E200", "1.1111111111111111E198", "7.77777711111111000000000000E200",
        "1.1111111111111110000000000E198", "7.777777777777777E52",
        "77777777777777777777777777777777777777777777777777777", "4.9e-324", "-0.1",
        "2.2250738585072011e-308", "123456789012345678901234567890e-20"}) {
    CAPTURE(number);
    double nearest = 0;
    REQUIRE(std::from_chars(number.data(), number.data() + number.size(), nearest).ec ==
            std::errc());
    const json::value v = parsed("[" + number + "]");
    CHECK(v.at(0).as_double() == nearest);
    CHECK(parsed(json::serialize(v)) == v);
  }
}

TEST_CASE("jsonrpc: the depth limit turns deep nesting into a clean parse error") {
  const rpc::ParseLimits limits{};  // max_depth 64
  CHECK(parsed(nested(limits.max_depth), limits).is_array());
  const rpc::Error deeper = parse_failure(nested(limits.max_depth + 1), limits);
  CHECK(deeper.code == rpc::kParseError);
  CHECK(deeper.message.find("nesting deeper than 64 levels") != std::string::npos);

  for (bool balanced : {true, false}) {
    CAPTURE(balanced);
    const rpc::Error e = parse_failure(nested(10'000, balanced), limits);
    CHECK(e.code == rpc::kParseError);
    CHECK(e.message.find("nesting deeper") != std::string::npos);
  }
  std::string objects;
  for (int i = 0; i < 10'000; ++i) objects += R"({"a":)";
  CHECK(parse_failure(objects).message.find("nesting deeper") != std::string::npos);
  // A custom limit is honoured.
  CHECK(parse_failure(nested(4), {.max_bytes = 1024, .max_depth = 3}).code == rpc::kParseError);
  CHECK(parsed(nested(3), {.max_bytes = 1024, .max_depth = 3}).is_array());
}

TEST_CASE("jsonrpc: from_json reads requests, notifications and responses") {
  SUBCASE("request with an integer id") {
    auto m = message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"2"}})");
    const auto& r = std::get<rpc::Request>(m);
    CHECK(r.id == rpc::Id{std::int64_t{7}});
    CHECK(r.method == "tools/list");
    CHECK(r.params == json::parse(R"({"cursor":"2"})"));
  }
  SUBCASE("request with a string id and no params") {
    const rpc::Message msg = message(R"({"jsonrpc":"2.0","id":"x","method":"ping"})");
    const auto& r = std::get<rpc::Request>(msg);
    CHECK(r.id == rpc::Id{std::string("x")});
    CHECK(r.params.is_null());
  }
  SUBCASE("positional params") {
    const rpc::Message msg = message(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1]})");
    const auto& r = std::get<rpc::Request>(msg);
    CHECK(r.params.is_array());
  }
  SUBCASE("an unsigned id that fits int64 is an integer id") {
    const rpc::Message msg =
        message(R"({"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"})");
    const auto& r = std::get<rpc::Request>(msg);
    CHECK(r.id == rpc::Id{std::int64_t{INT64_MAX}});
  }
  SUBCASE("notification") {
    const rpc::Message msg = message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    const auto& n = std::get<rpc::Notification>(msg);
    CHECK(n.method == "notifications/initialized");
  }
  SUBCASE("result response") {
    const rpc::Message msg = message(R"({"jsonrpc":"2.0","id":"s1","result":{"a":1}})");
    const auto& r = std::get<rpc::Response>(msg);
    REQUIRE(r.id);
    CHECK(*r.id == rpc::Id{std::string("s1")});
    CHECK_FALSE(r.is_error());
    CHECK(r.result() == json::parse(R"({"a":1})"));
  }
  SUBCASE("an error response with a null or missing id is a response, not an invalid request") {
    for (const char* text : {R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}})",
                             R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"p"}})"}) {
      CAPTURE(text);
      const rpc::Message msg = message(text);
      const auto& r = std::get<rpc::Response>(msg);
      CHECK_FALSE(r.id);
      CHECK(r.error().code == rpc::kParseError);
      CHECK(json::value(rpc::to_json(msg)) ==
            json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}})"));
    }
  }
  SUBCASE("error response with data") {
    const rpc::Message msg = message(
        R"({"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"nf","data":{"uri":"u"}}})");
    const auto& r = std::get<rpc::Response>(msg);
    REQUIRE(r.is_error());
    CHECK(r.error().code == rpc::kResourceNotFound);
    CHECK(r.error().message == "nf");
    REQUIRE(r.error().data);
    CHECK(*r.error().data == json::parse(R"({"uri":"u"})"));
  }
}

TEST_CASE("jsonrpc: from_json rejects what is not JSON-RPC 2.0 with kInvalidRequest") {
  struct Case {
    const char* text;
    std::optional<rpc::Id> id;
  };
  const Case cases[] = {
      {R"(42)", std::nullopt},
      {R"([])", std::nullopt},
      {R"("ping")", std::nullopt},
      {R"({"id":1,"method":"ping"})", rpc::Id{std::int64_t{1}}},
      {R"({"jsonrpc":"1.0","id":"a","method":"ping"})", rpc::Id{std::string("a")}},
      {R"({"jsonrpc":2.0,"id":1,"method":"ping"})", rpc::Id{std::int64_t{1}}},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", std::nullopt},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", std::nullopt},
      {R"({"jsonrpc":"2.0","id":true,"method":"ping"})", std::nullopt},
      {R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})", std::nullopt},
      {R"({"jsonrpc":"2.0","id":2,"method":5})", rpc::Id{std::int64_t{2}}},
      {R"({"jsonrpc":"2.0","id":2,"method":""})", rpc::Id{std::int64_t{2}}},
      {R"({"jsonrpc":"2.0","id":2,"method":"m","params":"x"})", rpc::Id{std::int64_t{2}}},
      {R"({"jsonrpc":"2.0","id":2,"method":"m","params":null})", rpc::Id{std::int64_t{2}}},
      {R"({"jsonrpc":"2.0","id":3})", rpc::Id{std::int64_t{3}}},
      {R"({"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}})",
       rpc::Id{std::int64_t{3}}},
      {R"({"jsonrpc":"2.0","result":{}})", std::nullopt},
      {R"({"jsonrpc":"2.0","id":4,"error":{"code":"1","message":"m"}})", rpc::Id{std::int64_t{4}}},
      {R"({"jsonrpc":"2.0","id":4,"error":{"code":1}})", rpc::Id{std::int64_t{4}}},
      {R"({"jsonrpc":"2.0","id":4,"error":"bad"})", rpc::Id{std::int64_t{4}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const rpc::Invalid bad = invalid(c.text);
    CHECK(bad.error.code == rpc::kInvalidRequest);
    CHECK(bad.error.message.rfind("Invalid Request", 0) == 0);
    CHECK(bad.id == c.id);
  }
}

TEST_CASE("jsonrpc: to_json writes the wire form") {
  CHECK(rpc::to_json(rpc::Id{std::int64_t{5}}) == json::value(5));
  CHECK(rpc::to_json(rpc::Id{std::string("5")}) == json::value("5"));
  CHECK(rpc::id_key(rpc::Id{std::int64_t{5}}) != rpc::id_key(rpc::Id{std::string("5")}));

  CHECK(rpc::make_result(rpc::Id{std::int64_t{1}}, json::object{}) ==
        json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  CHECK(rpc::make_error(std::nullopt, {rpc::kParseError, "Parse error"}) ==
        json::parse(
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})"));
  CHECK(
      rpc::make_error(rpc::Id{std::string("a")},
                      {rpc::kResourceNotFound, "nf", json::object{{"uri", "u"}}}) ==
      json::parse(
          R"({"jsonrpc":"2.0","id":"a","error":{"code":-32002,"message":"nf","data":{"uri":"u"}}})"));
  CHECK(rpc::make_request(rpc::Id{std::string("s1")}, "roots/list", nullptr) ==
        json::parse(R"({"jsonrpc":"2.0","id":"s1","method":"roots/list"})"));
  CHECK(rpc::make_notification("notifications/progress", json::object{{"progress", 1}}) ==
        json::parse(
            R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})"));

  const rpc::ProtocolError pe(rpc::kInvalidParams, "Invalid params: x", json::value("d"));
  CHECK(std::string(pe.what()) == "Invalid params: x");
  CHECK(pe.error().code == rpc::kInvalidParams);
  CHECK(pe.error().to_json() ==
        json::parse(R"({"code":-32602,"message":"Invalid params: x","data":"d"})"));

  for (const auto& text : kValidMessages) {
    const json::value v = parsed(text);
    if (!v.is_object()) continue;
    CAPTURE(text);
    auto m = rpc::from_json(v);
    REQUIRE(std::holds_alternative<rpc::Message>(m));
    CHECK(json::value(rpc::to_json(std::get<rpc::Message>(m))) == v);
  }
}

TEST_CASE("jsonrpc property: random byte strings never crash and fail cleanly") {
  std::mt19937_64 rng(0x5eed0001);
  const std::string alphabet = "{}[]:,\"\\ 0123456789-+.eEtrufalsn\t\n";
  int values = 0;
  for (int i = 0; i < 20'000; ++i) {
    std::string s;
    const std::size_t n = rng() % 48;
    const bool any_byte = i % 2 == 0;
    for (std::size_t k = 0; k < n; ++k) {
      s.push_back(any_byte ? static_cast<char>(rng() & 0xff) : alphabet[rng() % alphabet.size()]);
    }
    CAPTURE(i);
    check_clean(s);
    values += std::holds_alternative<json::value>(rpc::parse_json(s)) ? 1 : 0;
  }
  // The JSON-ish alphabet does produce some valid values, so both paths were exercised.
  CHECK(values > 100);
}

TEST_CASE("jsonrpc property: every proper prefix of a message is a clean parse error") {
  for (const auto& text : kValidMessages) {
    CAPTURE(text);
    check_clean(text);
    for (std::size_t n = 0; n < text.size(); ++n) {
      const std::string prefix = text.substr(0, n);
      CAPTURE(n);
      const auto r = rpc::parse_json(prefix);
      REQUIRE(std::holds_alternative<rpc::Error>(r));
      CHECK(std::get<rpc::Error>(r).code == rpc::kParseError);
    }
  }
}

TEST_CASE("jsonrpc property: random mutations of valid messages fail cleanly or round-trip") {
  std::mt19937_64 rng(0x5eed0002);
  std::string interesting = "{}[]:,\"\\0123456789-.etnf\xff\xc3";
  interesting.push_back('\0');
  int still_messages = 0;
  for (int i = 0; i < 20'000; ++i) {
    std::string s = kValidMessages[rng() % kValidMessages.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t at = rng() % s.size();
      const char c =
          rng() % 2 ? interesting[rng() % interesting.size()] : static_cast<char>(rng() & 0xff);
      switch (rng() % 4) {
        case 0:
          s[at] = c;
          break;
        case 1:
          s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          s.erase(at, 1 + rng() % 3);
          break;
        default:
          s.resize(at);  // truncation
      }
    }
    CAPTURE(i);
    CAPTURE(s);
    check_clean(s);
    const auto r = rpc::parse_json(s);
    if (const auto* v = std::get_if<json::value>(&r)) {
      still_messages += std::holds_alternative<rpc::Message>(rpc::from_json(*v)) ? 1 : 0;
    }
  }
  CHECK(still_messages > 100);
}

TEST_CASE("jsonrpc property: random JSON values and random objects with JSON-RPC keys") {
  std::mt19937_64 rng(0x5eed0003);
  for (int i = 0; i < 5'000; ++i) {
    const json::value v = random_json(rng, 0);
    const std::string text = json::serialize(v);
    CAPTURE(text);
    // What we write, we read back unchanged.
    const json::value back = parsed(text);
    CHECK(json::serialize(back) == text);
    check_clean(text);
  }
}

TEST_CASE("jsonrpc property: deep nesting at random depths is accepted up to the limit only") {
  std::mt19937_64 rng(0x5eed0004);
  for (int i = 0; i < 200; ++i) {
    const std::size_t limit = 1 + rng() % 100;
    const std::size_t depth = 1 + rng() % 200;
    const rpc::ParseLimits limits{.max_bytes = 1 << 20, .max_depth = limit};
    const bool objects = rng() % 2;
    std::string text;
    for (std::size_t d = 0; d < depth; ++d) text += objects ? R"({"k":)" : "[";
    text += "1";
    for (std::size_t d = 0; d < depth; ++d) text += objects ? "}" : "]";
    CAPTURE(limit);
    CAPTURE(depth);
    const auto r = rpc::parse_json(text, limits);
    CHECK(std::holds_alternative<json::value>(r) == (depth <= limit));
  }
}
