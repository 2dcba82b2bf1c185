// The configuration document: YAML and JSON parse to the same Config, errors name the key path,
// and the embedded default loads.
#include "mcpclass/config/config.hpp"
#include "mcpclass/transport/server/http_server_config.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace mcpclass;
using config::ConfigError;

namespace {

constexpr const char* kYaml = R"(
categories:
  - name: math
    description: Math
    system_prompt: |-
      You are a math expert.
      Show steps.
    model: math-model
  - name: other
    description: Everything else
    use_reasoning: false
classifier:
  kind: rules
  fallback: other
  temperature: 0.25
  rules:
    math:
      keywords: [derivative, integra*, "x"]
      patterns: ['\d\s*\+\s*\d']
      pattern_weight: 3
routing:
  reasoning: entropy
  low_confidence: {below: 0.5, model: big-model}
  short_queries: []
server:
  name: test-server
  version: "2.0"
  max_text_length: 500
  http: {host: 0.0.0.0, port: 9000}
)";

constexpr const char* kJson = R"({
  "categories": [
    {"name": "math", "description": "Math",
     "system_prompt": "You are a math expert.\nShow steps.", "model": "math-model"},
    {"name": "other", "description": "Everything else", "use_reasoning": false}
  ],
  "classifier": {"kind": "rules", "fallback": "other", "temperature": 0.25,
    "rules": {"math": {"keywords": ["derivative", "integra*", "x"],
                       "patterns": ["\\d\\s*\\+\\s*\\d"], "pattern_weight": 3}}},
  "routing": {"reasoning": "entropy", "low_confidence": {"below": 0.5, "model": "big-model"},
              "short_queries": []},
  "server": {"name": "test-server", "version": "2.0", "max_text_length": 500,
             "http": {"host": "0.0.0.0", "port": 9000}}
})";

std::string error_of(const std::string& text) {
  try {
    config::parse_config(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("config: YAML and JSON give the same result") {
  const auto from_yaml = config::parse_config(kYaml);
  const auto from_json = config::parse_config(kJson);
  CHECK(from_yaml.to_json() == from_json.to_json());

  const auto& c = from_yaml;
  REQUIRE(c.categories.size() == 2);
  CHECK(c.categories[0].system_prompt == "You are a math expert.\nShow steps.");
  CHECK(c.categories[0].model == "math-model");
  CHECK(c.categories[1].use_reasoning == false);
  CHECK(c.classifier.rules.fallback == "other");
  CHECK(c.classifier.rules.rules.at("math").pattern_weight == 3.0);
  CHECK(c.routing.reasoning == classify::ReasoningSource::entropy);
  CHECK(c.routing.low_confidence.model == "big-model");
  CHECK(c.server.name == "test-server");
  CHECK(c.server.version == "2.0");
  CHECK(c.server.max_text_length == 500);
  CHECK(transport::server::read_http_server_options(c.server.http).port == 9000);

  // Round trip through to_json and the explicit formats.
  CHECK(config::config_from_json(c.to_json()).to_json() == c.to_json());
  CHECK(config::parse_config(kYaml, config::Format::yaml).to_json() == c.to_json());
  CHECK(config::parse_config(kJson, config::Format::json).to_json() == c.to_json());

  const auto classifier = config::make_classifier(c);
  CHECK(classifier->classify("the derivative of x").category == "math");
  CHECK(classifier->classify("hello").category == "other");
  CHECK(classifier->classify("hello").model == "openai/gpt-oss-20b");
  CHECK(classifier->classify("the derivative of x").model == "math-model");
}

TEST_CASE("config: errors name the key path") {
  CHECK(error_of("classifier:\n  rules:\n    math:\n      keywords: [a, b, 3]\n") ==
        "classifier.rules.math.keywords[2]: expected string, got number");
  CHECK(error_of("categories:\n  - name: math\n  - {name: math}\n") ==
        "categories[1].name: duplicate category name 'math'");
  CHECK(error_of("categories: []\n") == "categories: at least one category is required");
  CHECK(error_of("categories:\n  - description: x\n") ==
        "categories[0].name: required key is missing");
  CHECK(error_of("server:\n  http:\n    port: 70000\n") ==
        "server.http.port: must be within [0, 65535]");
  CHECK(error_of("server:\n  max_text_length: -1\n") ==
        "server.max_text_length: must be a positive integer");
  CHECK(error_of("server:\n  colour: blue\n") == "server.colour: unknown key");
  CHECK(error_of("servers: {}\n") == "servers: unknown key");
  CHECK(error_of(R"({"routing": {"high_confidence": {"above": "high"}}})") ==
        "routing.high_confidence.above: expected number, got string");
  CHECK(error_of("classifier:\n  rules:\n    general:\n      patterns: ['.*']\n")
            .starts_with("classifier.rules.general.patterns[0]: pattern '.*' matches the empty"));
  CHECK(error_of("classifier:\n  rules:\n    poetry: {keywords: [sonnet]}\n") ==
        "classifier.rules.poetry: unknown category 'poetry'");
  CHECK(error_of("routing:\n  short_queries: [{category: poetry}]\n") ==
        "routing.short_queries[0].category: unknown category 'poetry'");
  CHECK(error_of("- just\n- a list\n") == "expected object, got array");
  CHECK(error_of("categories: [\n").starts_with("YAML syntax error at line"));
  CHECK(error_of("{\"categories\": [}").starts_with("JSON syntax error at line 1, column"));
  CHECK(error_of("{} trailing").starts_with("JSON syntax error"));
  CHECK(error_of("classifier:\n  kind: remote\n") == "classifier.remote: required for kind remote");
  CHECK(error_of("classifier:\n  remote: {url: 'http://127.0.0.1:1/mcp'}\n") ==
        "classifier.remote: only allowed with kind remote or composite");
}

TEST_CASE("config: a remote classifier section round-trips without connecting") {
  const auto c = config::parse_config(
      "classifier:\n  kind: remote\n  remote: {url: 'http://127.0.0.1:1/mcp'}\n");
  CHECK(c.classifier.kind == "remote");
  const auto again = config::config_from_json(c.to_json());
  CHECK(again.classifier.remote == c.classifier.remote);
}

TEST_CASE("config: server.http.tls and a remote ca_file read, validate and round-trip") {
  const auto c = config::parse_config(
      "server:\n  http:\n    tls: {cert_file: /etc/x/cert.pem, key_file: /etc/x/key.pem}\n"
      "classifier:\n  kind: remote\n"
      "  remote: {url: 'https://127.0.0.1:1/mcp', ca_file: /etc/x/ca.pem}\n");
  CHECK(transport::server::read_http_server_options(c.server.http).tls_cert_file ==
        "/etc/x/cert.pem");
  CHECK(transport::server::read_http_server_options(c.server.http).tls_key_file ==
        "/etc/x/key.pem");
  CHECK(c.classifier.remote.at("remote").at("ca_file") == "/etc/x/ca.pem");
  const auto again = config::config_from_json(c.to_json());
  const auto again_http = transport::server::read_http_server_options(again.server.http);
  CHECK(again_http.tls_cert_file == "/etc/x/cert.pem");
  CHECK(again_http.tls_key_file == "/etc/x/key.pem");
  CHECK(again.classifier.remote == c.classifier.remote);
  CHECK(!config::default_config().to_json().at("server").at("http").as_object().contains("tls"));

  CHECK(error_of("server:\n  http:\n    tls: {cert_file: a.pem}\n") ==
        "server.http.tls: needs both cert_file and key_file");
  CHECK(error_of("server:\n  http:\n    tls: {cert_file: a.pem, key_file: b.pem, ca: c}\n") ==
        "server.http.tls.ca: unknown key");
  CHECK(error_of("server:\n  http:\n    tls: a.pem\n") ==
        "server.http.tls: expected object, got string");
}

// Billion laughs: nine levels of nine aliases name 9^9 (387 million) scalars in under 1 KiB.
static std::string yaml_alias_bomb() {
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string prev = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", " : "") + prev;
    text += "]\n";
  }
  return text + "categories: *a9\n";
}

TEST_CASE("config: a YAML alias bomb is refused, not expanded") {
  const std::string bomb = yaml_alias_bomb();
  CHECK(bomb.size() < 1024);
  CHECK(error_of(bomb) ==
        "YAML document expands to more than 1000000 nodes (aliases repeated "
        "too often?)");
  // Aliases within the budget still work.
  const auto aliased = config::parse_config(
      "categories: [{name: &n math}, {name: other, description: *n}]\n"
      "classifier: {fallback: other}\n",
      config::Format::yaml);
  REQUIRE(aliased.categories.size() == 2);
  CHECK(aliased.categories[1].description == "math");
  std::string deep = "categories: ";
  for (int i = 0; i < 100; ++i) deep += "[";
  CHECK(error_of(deep + std::string(100, ']') + "\n").find("nesting deeper than 64 levels") !=
        std::string::npos);
}

TEST_CASE("config: YAML scalars resolve like the core schema") {
  // Quoted numbers stay strings, so a quoted port is a type error and a plain version is not.
  CHECK(error_of("server:\n  http:\n    port: '80'\n") ==
        "server.http.port: expected integer, got string");
  CHECK(error_of("server:\n  version: 1.5\n") == "server.version: expected string, got number");
  CHECK(config::parse_config("server:\n  version: 1.5.2\n").server.version == "1.5.2");
  CHECK(config::parse_config("server:\n  name: ~\n").server.name == "mcpclass");  // null = unset
  CHECK(config::parse_config("routing:\n  default_use_reasoning: FALSE\n")
            .routing.default_use_reasoning == false);
  CHECK(error_of("routing:\n  default_use_reasoning: yes\n") ==
        "routing.default_use_reasoning: expected boolean, got string");
}

TEST_CASE("config: the embedded default") {
  const auto c = config::default_config();
  REQUIRE(c.categories.size() == 5);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"math", "Mathematical and computational queries"},
      {"science", "Scientific concepts and queries"},
      {"technology", "Technology and computing topics"},
      {"history", "Historical events and topics"},
      {"general", "General questions and topics"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(c.categories[i].name == expected[i].first);
    CHECK(c.categories[i].description == expected[i].second);
    CHECK(c.categories[i].system_prompt.find('\n') != std::string::npos);
    CHECK_FALSE(c.categories[i].model.has_value());
    CHECK_FALSE(c.categories[i].use_reasoning.has_value());
  }
  CHECK(c.categories[0].system_prompt ==
        "You are a mathematics expert. When answering math questions:\n"
        "- Show step-by-step solutions with clear explanations\n"
        "- Use proper mathematical notation and terminology\n"
        "- Verify calculations and provide intermediate steps\n"
        "- Explain the underlying concepts and principles\n"
        "- Offer alternative approaches when applicable");
  CHECK(c.categories[1].system_prompt ==
        "You are a science expert. When answering science questions:\n"
        "- Provide evidence-based answers grounded in scientific research\n"
        "- Explain relevant scientific concepts and principles\n"
        "- Use appropriate scientific terminology\n"
        "- Cite the scientific method and experimental evidence when relevant\n"
        "- Distinguish between established facts and current theories");
  CHECK(c.classifier.kind == "rules");
  CHECK(c.routing.to_json() == classify::RoutingPolicy{}.to_json());
  CHECK(c.server.max_text_length == 10000);
  CHECK(transport::server::read_http_server_options(c.server.http).port == 8090);

  // Empty documents and missing sections take the defaults.
  CHECK(config::parse_config("").to_json() == c.to_json());
  CHECK(config::parse_config("{}").to_json() == c.to_json());
  CHECK(config::parse_config("server: {name: x}").categories == c.categories);
  // Given categories without a classifier section: rules with no keywords.
  const auto bare = config::parse_config("categories: [{name: general}, {name: misc}]");
  CHECK(bare.classifier.rules.rules.empty());
  CHECK(config::make_classifier(bare)->classify("anything").category == "general");

  const auto classifier = config::make_classifier(c);
  const auto r = classifier->classify("What is the derivative of x squared?", {true});
  CHECK(r.category == "math");
  CHECK(r.model == "openai/gpt-oss-20b");
}

TEST_CASE("config: server.http limits reach the HTTP transport, absent ones keep its defaults") {
  const auto c = config::parse_config(R"(
server:
  http:
    port: 0
    io_threads: 1
    max_sessions: 20000
    max_sse_streams: 300
    max_sse_streams_per_client: 16
    max_body_bytes: 65536
    max_header_bytes: 8192
    event_store_size: 0
    session_idle_timeout: 1.5
    read_timeout: 10
    idle_timeout: 0.25
    shutdown_timeout: 0
    drain_grace: 2.5
    max_connections: 500
    send_buffer_bytes: 8192
    write_timeout: 2
    sse_heartbeat: 0
    event_store_bytes: 1000
    event_store_session_bytes: 3000
    event_store_total_bytes: 0
    session_id_prefix: pod-1.
)");
  const auto o = transport::server::read_http_server_options(c.server.http);
  CHECK(o.session_id_prefix == "pod-1.");
  CHECK(o.port == 0);
  CHECK(o.io_threads == 1);
  CHECK(o.max_sessions == 20000);
  CHECK(o.max_sse_streams == 300);
  CHECK(o.max_sse_streams_per_client == 16);
  CHECK(o.max_body_bytes == 65536);
  CHECK(o.max_header_bytes == 8192);
  CHECK(o.event_store_size == 0);
  CHECK(o.session_idle_timeout == std::chrono::milliseconds(1500));
  CHECK(o.read_timeout == std::chrono::seconds(10));
  CHECK(o.idle_timeout == std::chrono::milliseconds(250));
  CHECK(o.shutdown_timeout == std::chrono::milliseconds(0));
  CHECK(o.drain_grace == std::chrono::milliseconds(2500));
  CHECK(o.max_connections == 500);
  CHECK(o.send_buffer_bytes == 8192);
  CHECK(o.write_timeout == std::chrono::seconds(2));
  CHECK(o.sse_heartbeat == std::chrono::milliseconds(0));
  CHECK(o.event_store_bytes == 1000);
  CHECK(o.event_store_session_bytes == 3000);
  CHECK(o.event_store_total_bytes == 0);
  // The document round-trips, and a document without limits gives the transport's defaults.
  CHECK(config::parse_config(boost::json::serialize(c.to_json())).to_json() == c.to_json());
  const transport::server::HttpServerOptions defaults;
  const auto d = transport::server::read_http_server_options(config::default_config().server.http);
  CHECK(d.port == 8090);
  CHECK(d.io_threads == defaults.io_threads);
  CHECK(d.max_sessions == defaults.max_sessions);
  CHECK(d.session_idle_timeout == defaults.session_idle_timeout);
  CHECK_FALSE(config::default_config().to_json().at("server").at("http").as_object().contains(
      "max_sessions"));

  CHECK(error_of("server:\n  http:\n    io_threads: 0\n") ==
        "server.http.io_threads: must be within [1, 64]");
  CHECK(error_of("server:\n  http:\n    max_sessions: 0\n") ==
        "server.http.max_sessions: must be an integer >= 1");
  CHECK(error_of("server:\n  http:\n    max_body_bytes: 1.5\n") ==
        "server.http.max_body_bytes: expected integer, got number");
  CHECK(error_of("server:\n  http:\n    session_idle_timeout: 0\n") ==
        "server.http.session_idle_timeout: must be within (0, 86400] seconds");
  CHECK(error_of("server:\n  http:\n    read_timeout: fast\n") ==
        "server.http.read_timeout: expected number, got string");
  CHECK(error_of("server:\n  http:\n    shutdown_timeout: -1\n") ==
        "server.http.shutdown_timeout: must be within [0, 86400] seconds");
  CHECK(error_of("server:\n  http:\n    max_conections: 5\n") ==
        "server.http.max_conections: unknown key");
  CHECK(error_of("server:\n  http:\n    max_connections: 0\n") ==
        "server.http.max_connections: must be an integer >= 1");
  CHECK(error_of("server:\n  http:\n    write_timeout: 0\n") ==
        "server.http.write_timeout: must be within (0, 86400] seconds");
  CHECK(d.session_id_prefix.empty());
  CHECK(error_of("server:\n  http:\n    session_id_prefix: 'a b'\n") ==
        "server.http.session_id_prefix: must be at most 64 of [A-Za-z0-9._-]");
  CHECK(error_of("server:\n  http:\n    session_id_prefix: " + std::string(65, 'x') + "\n") ==
        "server.http.session_id_prefix: must be at most 64 of [A-Za-z0-9._-]");
}

TEST_CASE("config: files and classifier kinds") {
  const std::string dir = MCPCLASS_BINARY_DIR;
  const std::string yaml_path = dir + "/test_config_tmp.yaml";
  const std::string json_path = dir + "/test_config_tmp.json";
  {
    std::ofstream(yaml_path) << kYaml;
    std::ofstream(json_path) << kJson;
  }
  CHECK(config::load_config_file(yaml_path).to_json() ==
        config::load_config_file(json_path).to_json());
  { std::ofstream(yaml_path) << "server: {port: 1}\n"; }
  try {
    config::load_config_file(yaml_path);
    FAIL("accepted a bad file");
  } catch (const ConfigError& e) {
    CHECK(e.path() == "server.port");
    CHECK(std::string(e.what()) == "server.port: unknown key (in '" + yaml_path + "')");
  }
  std::remove(yaml_path.c_str());
  std::remove(json_path.c_str());
  CHECK_THROWS_WITH_AS(config::load_config_file(dir + "/does-not-exist.yaml"),
                       ("cannot open config file '" + dir + "/does-not-exist.yaml'").c_str(),
                       ConfigError);

  auto c = config::default_config();
  c.classifier.kind = "embedding";
  CHECK_THROWS_WITH_AS(
      config::make_classifier(c),
      "classifier.kind: unsupported classifier kind 'embedding' (supported: rules, remote, "
      "composite, embedding_knn, trained_head, torchscript, transformer)",
      ConfigError);
}

TEST_CASE("config: server.http.auth reaches the transport, tokens resolve from env and file") {
  const std::string file = "test_config_tokens.txt";
  {
    std::ofstream out(file);
    out << "# rotated 2026-11\nfile-token-1\n\n  file-token-2  \n";
  }
  ::setenv("MCPCLASS_TEST_TOKEN", "env-token", 1);
  const auto c = config::parse_config(R"(
server:
  http:
    host: 0.0.0.0
    auth:
      allowed_hosts: [mcp.example.com]
      allowed_origins: ["https://app.example"]
      bearer_tokens: ["${MCPCLASS_TEST_TOKEN}", literal-token]
      bearer_tokens_file: test_config_tokens.txt
)");
  const auto as_written = transport::server::read_http_server_options(
      c.server.http, "server.http", transport::server::HttpSecrets::as_written);
  CHECK(as_written.bearer_tokens ==
        std::vector<std::string>{"${MCPCLASS_TEST_TOKEN}", "literal-token"});
  // Printing the configuration shows the reference, never the secret.
  const std::string printed = boost::json::serialize(c.to_json());
  CHECK(printed.find("${MCPCLASS_TEST_TOKEN}") != std::string::npos);
  CHECK(printed.find("env-token") == std::string::npos);
  CHECK(config::parse_config(printed).to_json() == c.to_json());

  const auto o = transport::server::read_http_server_options(c.server.http);
  CHECK(o.allowed_hosts == std::vector<std::string>{"mcp.example.com"});
  CHECK(o.allowed_origins == std::vector<std::string>{"https://app.example"});
  CHECK(o.bearer_tokens ==
        std::vector<std::string>{"env-token", "literal-token", "file-token-1", "file-token-2"});
  CHECK_FALSE(o.allow_unauthenticated);

  ::unsetenv("MCPCLASS_TEST_TOKEN");
  CHECK_THROWS_WITH(transport::server::read_http_server_options(c.server.http),
                    "server.http.auth.bearer_tokens: environment variable MCPCLASS_TEST_TOKEN is "
                    "unset or empty");
  std::remove(file.c_str());
  auto no_file = c.server.http;
  no_file["auth"].as_object().erase("bearer_tokens");
  CHECK_THROWS_WITH(transport::server::read_http_server_options(no_file),
                    "server.http.auth.bearer_tokens_file: cannot read 'test_config_tokens.txt'");
  CHECK(error_of("server:\n  http:\n    auth:\n      bearer_tokens: ['']\n") ==
        "server.http.auth.bearer_tokens: a token must not be empty");
  CHECK(error_of("server:\n  http:\n    auth:\n      tokens: [a]\n") ==
        "server.http.auth.tokens: unknown key");
  CHECK(transport::server::read_http_server_options(
            config::parse_config("server:\n  http:\n    auth: {allow_unauthenticated: true}\n")
                .server.http)
            .allow_unauthenticated);
}

TEST_CASE("server.admission reads its limits and names what is wrong") {
  const auto c = config::parse_config(
      "server: {admission: {max_concurrent: 2, max_queue: 6, retry_after: 3}}");
  CHECK(c.server.admission.max_concurrent == 2);
  CHECK(c.server.admission.max_queue == 6);
  CHECK(c.server.admission.retry_after == std::chrono::seconds(3));
  CHECK(config::config_from_json(c.to_json()).to_json() == c.to_json());
  CHECK(config::parse_config("{}").server.admission.max_concurrent == 0);
  CHECK_THROWS_WITH_AS(config::parse_config("server: {admission: {max_queue: 6}}"),
                       doctest::Contains("server.admission.max_concurrent: is required"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(
      config::parse_config("server: {admission: {max_concurrent: 200, max_queue: 100}}"),
      doctest::Contains("server.admission.max_queue: max_concurrent + max_queue must be at most "
                        "256"),
      ConfigError);
  CHECK_THROWS_WITH_AS(config::parse_config("server: {admission: {max_concurrent: 1, burst: 2}}"),
                       doctest::Contains("server.admission.burst"), ConfigError);
}
