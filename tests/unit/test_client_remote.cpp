// The remote classifier's pure parts (tool discovery per reference.md §3, result validation,
// options) and the remote and composite classifiers against our own server in-process.
#include "client_loopback.hpp"

#include "mcpclass/classify/composite_classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/util/executor.hpp"
#include "remote/remote_detail.hpp"

#include <doctest/doctest.h>

using namespace mcpclass;
namespace json = boost::json;

namespace {

json::array tools(std::initializer_list<std::pair<const char*, const char*>> list) {
  json::array out;
  for (const auto& [name, description] : list)
    out.push_back(json::object{{"name", name}, {"description", description}});
  return out;
}

json::object text_result(const std::string& text) {
  return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
          {"isError", false}};
}

classify::CategorySet three() {
  std::size_t n = 0;
  return remote::detail::parse_categories(
      json::parse(R"({"categories":["math","science","history"]})").as_object(), "other", {}, n);
}

}  // namespace

TEST_CASE("remote: tool discovery follows the reference priority") {
  using remote::discover_classification_tool;
  const auto t = tools({{"categorize", ""}, {"classify", ""}, {"classify_text", ""}});
  CHECK(discover_classification_tool(t, "") == "classify_text");
  CHECK(discover_classification_tool(t, "categorize") == "categorize");  // configured wins
  CHECK(discover_classification_tool(tools({{"categorize_text", ""}, {"categorize", ""}}), "") ==
        "categorize");
  CHECK(discover_classification_tool(tools({{"x", "nothing"}, {"MyClassifier", ""}}), "") ==
        "MyClassifier");
  CHECK(discover_classification_tool(tools({{"route", "Classifies queries"}}), "") == "route");
  try {
    discover_classification_tool(tools({{"echo", "Echoes"}, {"add", "Adds"}}), "");
    FAIL("expected RemoteProtocolError");
  } catch (const remote::RemoteProtocolError& e) {
    CHECK(std::string(e.what()).find("echo, add") != std::string::npos);  // lists the tools
  }
  CHECK_THROWS_AS(discover_classification_tool(t, "missing"), remote::RemoteProtocolError);
}

TEST_CASE("remote: categories come from list_categories, fallback appended, count validated") {
  const auto set = three();
  CHECK(set.size() == 4);
  CHECK(set[3].name == "other");
  std::size_t n = 0;
  const auto doc = json::parse(R"({"categories":["a","other"],
      "category_descriptions":{"a":"A things"},"category_system_prompts":{"a":"You are A"}})");
  const auto own = remote::detail::parse_categories(doc.as_object(), "other", 2, n);
  CHECK(own.size() == 2);  // "other" already offered: not appended
  CHECK(own[0].description == "A things");
  CHECK(own[0].system_prompt == "You are A");
  CHECK_THROWS_AS(remote::detail::parse_categories(doc.as_object(), "other", 5, n),
                  remote::RemoteProtocolError);
  CHECK_THROWS_AS(remote::detail::parse_categories(json::object{}, "other", {}, n),
                  remote::RemoteInvalidResult);
}

TEST_CASE("remote: every result is validated, invalid ones are errors, never passed on") {
  const auto set = three();
  auto parse = [&](const char* wire, double threshold = 0.5) {
    return remote::detail::parse_classification(json::parse(wire).as_object(), set, 3, threshold,
                                                "other");
  };
  const auto ok = parse(
      R"({"class":1,"confidence":0.8,"model":"m","use_reasoning":true,"probabilities":[0.1,0.8,0.1]})");
  CHECK(ok.category == "science");
  CHECK(ok.use_reasoning);
  CHECK(ok.probabilities.size() == 4);  // one per category, the fallback with 0
  CHECK(ok.probabilities[3] == 0.0);
  CHECK_FALSE(ok.in_scope.has_value());
  // A remote learned head's out-of-scope score is kept (routing.out_of_scope reads it here too).
  const auto scored = parse(R"({"class":1,"confidence":0.8,"probabilities":[0.1,0.8,0.1],
      "in_scope":0.25})");
  CHECK(scored.in_scope == 0.25);
  // Sums within the router's 0.95..1.05 are normalised, not rejected.
  const auto sloppy = parse(R"({"class":0,"confidence":0.7,"probabilities":[0.7,0.2,0.09]})");
  CHECK(sloppy.probabilities[0] == doctest::Approx(0.7 / 0.99));
  // Below the threshold: the fallback category.
  CHECK(parse(R"({"class":1,"confidence":0.4,"probabilities":[0.3,0.4,0.3]})").category == "other");
  using remote::RemoteInvalidResult;
  for (const char* bad : {
           R"({"class":3,"confidence":0.8,"probabilities":[0.1,0.8,0.1]})",    // index range
           R"({"class":-1,"confidence":0.8,"probabilities":[0.1,0.8,0.1]})",   // negative
           R"({"class":1.5,"confidence":0.8,"probabilities":[0.1,0.8,0.1]})",  // not integral
           R"({"class":1,"confidence":0.8,"probabilities":[0.2,0.8]})",        // length
           R"({"class":1,"confidence":0.8,"probabilities":[0.5,0.8,0.1]})",    // sum 1.4
           R"({"class":1,"confidence":0.5,"probabilities":[0.05,0.9,0.05]})",  // conf < .9 max
           R"({"class":1,"confidence":1.5,"probabilities":[0.1,0.8,0.1]})",    // conf range
           R"({"class":1,"confidence":0.8,"probabilities":[-0.1,1.0,0.1]})",   // p range
           R"({"class":1,"confidence":0.8})",                                  // no distribution
           R"({"confidence":0.8,"probabilities":[0.1,0.8,0.1]})",              // no class
           R"({"class":"1","confidence":0.8,"probabilities":[0.1,0.8,0.1]})",  // wrong type
           R"({"class":1,"confidence":0.8,"probabilities":[0.1,0.8,0.1],"in_scope":1.5})",
           R"({"class":1,"confidence":0.8,"probabilities":[0.1,0.8,0.1],"in_scope":"x"})",
       }) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse(bad), RemoteInvalidResult);
  }
}

TEST_CASE("remote: tool payloads: structuredContent, text JSON, isError and {error} texts") {
  using remote::detail::tool_payload;
  CHECK(tool_payload(text_result(R"({"class":0})"), "t").at("class").as_int64() == 0);
  json::object structured = text_result("ignored");
  structured["structuredContent"] = json::object{{"class", 2}};
  CHECK(tool_payload(structured, "t").at("class").as_int64() == 2);
  json::object failed = text_result("boom");
  failed["isError"] = true;
  CHECK_THROWS_AS(tool_payload(failed, "t"), remote::RemoteProtocolError);
  CHECK_THROWS_AS(tool_payload(text_result(R"({"error":"No text provided"})"), "t"),
                  remote::RemoteProtocolError);
  CHECK_THROWS_AS(tool_payload(text_result("not json"), "t"), remote::RemoteInvalidResult);
  CHECK_THROWS_AS(tool_payload(json::object{{"content", json::array{}}}, "t"),
                  remote::RemoteInvalidResult);
}

TEST_CASE("remote: options from the config document, with key paths in errors") {
  const auto o = remote::RemoteClassifierOptions::from_json(json::parse(R"({
      "url":"http://127.0.0.1:8090/mcp","timeout":2.5,"max_retries":4,"num_categories":5,
      "confidence_threshold":0.7,"fallback_category":"general",
      "headers":{"Authorization":"Bearer ${MCP_API_KEY}"},
      "circuit_breaker":{"failures":3,"open_seconds":10}})"));
  CHECK(o.timeout == std::chrono::milliseconds(2500));
  CHECK(o.max_retries == 4);
  CHECK(o.num_categories == 5u);
  CHECK(o.breaker_failures == 3);
  CHECK(o.headers.at("Authorization") == "Bearer ${MCP_API_KEY}");
  const auto s = remote::RemoteClassifierOptions::from_json(
      json::parse(R"({"command":"python3 server.py --flag 'two words'"})"));
  CHECK(s.command == std::vector<std::string>{"python3", "server.py", "--flag", "two words"});
  auto error_of = [](const char* doc) {
    try {
      remote::RemoteClassifierOptions::from_json(json::parse(doc));
    } catch (const classify::ConfigError& e) {
      return e.path();
    }
    return std::string("no error");
  };
  CHECK(error_of(R"({"url":"http://x/mcp","timeout":0})") == "classifier.remote.timeout");
  CHECK(error_of(R"({"url":"http://x/mcp","tiemout":1})") == "classifier.remote.tiemout");
  CHECK(error_of(R"({"transport":"stdio"})") == "classifier.remote.command");
  CHECK(error_of(R"({})") == "classifier.remote.url");
  CHECK(error_of(R"({"url":"u","confidence_threshold":2})") ==
        "classifier.remote.confidence_threshold");
}

namespace {

struct OwnServer {
  util::ThreadPool pool{2};
  std::shared_ptr<server::Server> server;
  std::shared_ptr<const classify::Classifier> local;
  OwnServer() {
    server = server::Server::create({}, pool.executor());
    local = config::make_classifier(config::default_config());
    service::register_classification(*server, local);
  }
  ~OwnServer() { pool.stop(); }
};

remote::RemoteClassifierOptions loopback_options() {
  remote::RemoteClassifierOptions o;
  o.transport = "loopback";
  o.timeout = std::chrono::seconds(5);
  return o;
}

/// A classifier that always fails like an unreachable remote.
struct DownClassifier : classify::Classifier {
  explicit DownClassifier(classify::CategorySet s) : set(std::move(s)) {}
  const classify::CategorySet& categories() const override { return set; }
  classify::Classification classify(std::string_view,
                                    const classify::ClassifyOptions&) const override {
    ++calls;
    throw remote::RemoteUnreachable("down");
  }
  std::string kind() const override { return "down"; }
  json::object info() const override { return {{"kind", "down"}}; }
  classify::CategorySet set;
  mutable int calls = 0;
};

}  // namespace

TEST_CASE("remote: against our own server, results equal the local classifier's") {
  OwnServer own;
  auto transport = std::make_shared<test::LoopbackTransport>(own.server);
  remote::RemoteClassifier remote(loopback_options(), transport);
  CHECK(remote.tool_name() == "classify_text");
  CHECK(remote.categories().size() == own.local->categories().size() + 1);  // + "other"
  CHECK(remote.categories()[0].system_prompt == own.local->categories()[0].system_prompt);
  for (const char* text : {"solve the integral of x squared with calculus and algebra",
                           "explain the french revolution and the napoleonic empire",
                           "what is the capital of france"}) {
    CAPTURE(text);
    const auto l = own.local->classify(text, {true});
    const auto r = remote.classify(text);
    if (l.confidence >= 0.5)
      CHECK(r.category == l.category);
    else
      CHECK(r.category == "other");
    CHECK(r.confidence == doctest::Approx(l.confidence));
    CHECK(r.use_reasoning == l.use_reasoning);
  }
  CHECK(remote.info().at("calls").as_uint64() == 3);
  CHECK(remote.info().at("circuit").as_string() == "closed");
}

TEST_CASE("remote: a dropped connection is re-established on the next call") {
  OwnServer own;
  auto transport = std::make_shared<test::LoopbackTransport>(own.server);
  remote::RemoteClassifier remote(loopback_options(), transport);
  transport->close();  // the server side went away
  const auto r = remote.classify("solve the integral of x squared with calculus and algebra");
  CHECK(!r.category.empty());
  CHECK(transport->starts == 2);
}

TEST_CASE("composite: local first asks the remote only below the threshold") {
  OwnServer own;
  auto transport = std::make_shared<test::LoopbackTransport>(own.server);
  auto remote = std::make_shared<remote::RemoteClassifier>(loopback_options(), transport);
  classify::CompositeClassifier confident(own.local, remote,
                                          {classify::CompositeMode::local_first, 0.0});
  const int before = transport->sent;
  confident.classify("solve the integral of x squared");
  CHECK(transport->sent == before);  // threshold 0: never remote
  classify::CompositeClassifier doubtful(own.local, remote,
                                         {classify::CompositeMode::local_first, 1.01});
  const auto r = doubtful.classify("what is the capital of france");
  CHECK(transport->sent > before);
  const auto info = doubtful.info();
  const auto answered =
      info.at("answered_remote").as_uint64() + info.at("answered_local").as_uint64();
  CHECK(answered == 1);
  // The remote's "other" fallback is unknown locally, so such a result falls back to local.
  CHECK(own.local->categories().index_of(r.category).has_value());
}

TEST_CASE("composite: remote first falls back to local when the remote is down") {
  OwnServer own;
  auto down = std::make_shared<DownClassifier>(own.local->categories());
  classify::CompositeClassifier c(own.local, down, {classify::CompositeMode::remote_first, 0.6});
  const auto r = c.classify("solve the integral of x squared");
  CHECK(r.category == own.local->classify("solve the integral of x squared").category);
  CHECK(down->calls == 1);
  CHECK(c.info().at("remote_failures").as_uint64() == 1);
  CHECK(c.info().at("remote").as_object().at("kind").as_string() == "down");
}
