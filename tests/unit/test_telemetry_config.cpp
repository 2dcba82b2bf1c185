// The `telemetry.otlp` section: read, kept as written and printed back, every bad value a
// ConfigError naming its key (docs/tracing.md, docs/bad-input.md).
#include "mcpclass/config/config.hpp"
#include "mcpclass/net/otlp_exporter.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <string>

using namespace mcpclass;

namespace {

std::string error_of(const std::string& telemetry) {
  try {
    config::parse_config("telemetry: " + telemetry + "\n");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("telemetry.otlp is read with its defaults and printed back as written") {
  const auto c = config::parse_config(
      "telemetry:\n  otlp: {endpoint: \"http://127.0.0.1:4318/v1/traces\", batch: 8, "
      "max_spans: 64, interval: 0.5, headers: {x-key: \"${OTLP_KEY}\"}}\n");
  const auto o = net::read_telemetry_options(c.telemetry, "telemetry");
  CHECK(o.endpoint == "http://127.0.0.1:4318/v1/traces");
  CHECK(o.batch == 8);
  CHECK(o.max_spans == 64);
  CHECK(o.interval.count() == 500);
  CHECK(o.timeout.count() == 2000);
  CHECK(o.service_name == "mcpclass");
  REQUIRE(o.headers.size() == 1);
  CHECK(o.headers[0].second == "${OTLP_KEY}");  // resolved when the exporter starts
  CHECK(config::config_from_json(c.to_json()).to_json() == c.to_json());
  CHECK(config::parse_config("{}").telemetry.empty());
}

TEST_CASE("a bad telemetry.otlp value names its key") {
  CHECK(error_of("{otlp: {}}").find("telemetry.otlp.endpoint: ") == 0);
  CHECK(error_of("{otlp: {endpoint: \"udp://x:1\"}}")
            .find("telemetry.otlp.endpoint: 'udp://x:1' is not an http:// or https:// URL") == 0);
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\", batch: 0}}")
            .find("telemetry.otlp.batch: must be within [1, 100000]") == 0);
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\", batch: 100, max_spans: 10}}") ==
        "telemetry.otlp.batch: must not exceed max_spans (10): 100");
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\", timeout: 0}}")
            .find("telemetry.otlp.timeout: must be within (0, 86400] seconds") == 0);
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\", headers: {a: 1}}}")
            .find("telemetry.otlp.headers.a: ") == 0);
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\", sample: 1}}") ==
        "telemetry.otlp.sample: unknown key");
  CHECK(error_of("{otlp: {endpoint: \"http://h/v1/traces\"}, logs: {}}") ==
        "telemetry.logs: unknown key");
  CHECK(error_of("[]").find("telemetry: ") == 0);
}
