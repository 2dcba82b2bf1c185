// util::parse_traceparent against W3C Trace Context level 1, and the spans opened under it.
#include "mcpclass/util/trace_context.hpp"

#include <doctest/doctest.h>

#include <string>

using mcpclass::util::parse_traceparent;
using mcpclass::util::start_span;

namespace {

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kParent = "00f067aa0ba902b7";

std::string header(std::string version, std::string trace, std::string parent, std::string flags) {
  return version + "-" + trace + "-" + parent + "-" + flags;
}

}  // namespace

TEST_CASE("a version 00 traceparent gives its trace id, parent id, flags and tracestate") {
  const auto parsed = parse_traceparent(header("00", kTrace, kParent, "01"), "vendor=value");
  REQUIRE(parsed);
  const auto span = start_span(parsed);
  CHECK(span.trace_id_hex() == kTrace);
  CHECK(mcpclass::util::hex_of(span.parent_id.data(), span.parent_id.size()) == kParent);
  CHECK(span.flags == 1);
  CHECK(span.tracestate == "vendor=value");
  CHECK(span.span_id_hex() != kParent);
  CHECK(span.traceparent() == header("00", kTrace, span.span_id_hex(), "01"));
}

TEST_CASE("a malformed traceparent is ignored, never an error") {
  const std::string zeros32(32, '0'), zeros16(16, '0');
  for (const auto& bad :
       {header("00", "4BF92F3577B34DA6A3CE929D0E0E4736", kParent, "01"),  // upper case
        header("00", zeros32, kParent, "01"),                             // all-zero trace
        header("00", kTrace, zeros16, "01"),                              // all-zero parent
        header("ff", kTrace, kParent, "01"),                              // version ff
        header("00", kTrace, kParent, "01") + "-more",               // version 00 has four fields
        header("00", kTrace, kParent, "0g"),                         // not hex
        header("00", std::string(kTrace).substr(1), kParent, "01"),  // short trace id
        std::string("00_") + kTrace + "-" + kParent + "-01",         // wrong separator
        std::string(), std::string("garbage")}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_traceparent(bad, "a=b"));
  }
}

TEST_CASE("a later version is read by its first four fields") {
  CHECK(parse_traceparent(header("01", kTrace, kParent, "01") + "-what-comes-next"));
  CHECK(parse_traceparent(header("01", kTrace, kParent, "01")));
  CHECK_FALSE(parse_traceparent(header("01", kTrace, kParent, "01") + "x"));
}

TEST_CASE("an overlong or unprintable tracestate is dropped with the traceparent kept") {
  const auto longer = parse_traceparent(header("00", kTrace, kParent, "01"), std::string(513, 'a'));
  REQUIRE(longer);
  CHECK(longer->tracestate.empty());
  const auto control = parse_traceparent(header("00", kTrace, kParent, "01"), "a=\n");
  REQUIRE(control);
  CHECK(control->tracestate.empty());
}

TEST_CASE("without a parent a span starts a sampled trace of its own and its child follows it") {
  const auto root = start_span(std::nullopt);
  CHECK_FALSE(root.has_parent());
  CHECK(root.flags == 1);
  CHECK(root.trace_id_hex() != std::string(32, '0'));
  CHECK(start_span(std::nullopt).trace_id_hex() != root.trace_id_hex());
  const auto child = root.child();
  CHECK(child.trace_id == root.trace_id);
  CHECK(child.parent_id == root.span_id);
  CHECK(child.span_id != root.span_id);
}
