// Golden JSON-RPC transcripts against the conformance fixture (tests/transcripts/*.jsonl).
//
// File format, one item per line:
//   > {json}   client→server; sent as written (so it may be malformed), then the runner waits
//              until that message's stream closes or the server sends a request to the client
//              on it (which a later `> {response}` line must answer)
//   >> {json}  client→server without waiting (a slow call that a later line cancels)
//   < {json}   the next message the server sends: every Stream::send and every non-empty
//              Stream::close payload, in arrival order. Compared structurally (object key order
//              ignored, numbers by value); the string "<any>" matches any value.
//   # comment  ignored, except the directives `# page_size: N` and
//              `# client_request_timeout_ms: N` (server options, before the first message) and
//              `# sleep_ms: N` (pause here).
// At the end of a file every stream must be closed and every message the server sent must have
// been expected.
// Set MCPCLASS_TRANSCRIPT=<substring> to run some files only. MCPCLASS_TRANSCRIPT_RECORD=1 ignores
// the `<` lines and prints the file with what the server actually sent after each `>` line (a
// draft for new transcripts: review every line, and reorder what `>>` calls send later).
#include "conformance_fixture.hpp"
#include "session_driver.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"
#include "mcpclass/util/executor.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using mcpclass::server::Server;
using mcpclass::server::ServerOptions;
using mcpclass::server::Session;
using mcpclass::server::Stream;
using namespace std::chrono_literals;
using mcpclass::test::CollectingStream;
using mcpclass::test::deliver;
using mcpclass::test::initialize;

constexpr auto kWaitLimit = 10s;

// Everything the server sends to the client of one session, in arrival order.
class Recorder {
 public:
  void push(json::value message) {
    {
      std::lock_guard lock(mutex_);
      messages_.push_back(std::move(message));
    }
    cv_.notify_all();
  }

  std::optional<json::value> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return !messages_.empty(); })) return std::nullopt;
    json::value v = std::move(messages_.front());
    messages_.pop_front();
    return v;
  }

  std::vector<json::value> drain() {
    std::lock_guard lock(mutex_);
    std::vector<json::value> all(messages_.begin(), messages_.end());
    messages_.clear();
    return all;
  }

  void contract_violation(std::string what) {
    std::lock_guard lock(mutex_);
    violations_.push_back(std::move(what));
  }

  std::vector<std::string> violations() const {
    std::lock_guard lock(mutex_);
    return violations_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<json::value> messages_;
  std::vector<std::string> violations_;
};

// The stream of one client→server message; checks the engine's contract (close exactly once,
// nothing after close).
class TestStream final : public Stream {
 public:
  TestStream(Recorder& recorder, std::string origin)
      : recorder_(recorder), origin_(std::move(origin)) {}

  void send(json::value message) override {
    const auto* o = message.if_object();
    const bool is_request = o && o->contains("method") && o->contains("id");
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        recorder_.contract_violation(
            fmt::format("{}: send after close: {}", origin_, json::serialize(message)));
        return;
      }
      if (is_request) asked_client_ = true;
      recorder_.push(std::move(message));
    }
    cv_.notify_all();
  }

  void close(std::optional<json::value> final_message) override {
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        recorder_.contract_violation(fmt::format("{}: stream closed twice", origin_));
        return;
      }
      closed_ = true;
      if (final_message) recorder_.push(std::move(*final_message));
    }
    cv_.notify_all();
  }

  // Waits until the stream closes or the server asked the client something on it.
  bool wait_settled(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return closed_ || asked_client_; });
  }

  bool wait_closed(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return closed_; });
  }

  const std::string& origin() const { return origin_; }

 private:
  Recorder& recorder_;
  std::string origin_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool asked_client_ = false;
};

bool is_number(const json::value& v) {
  return v.is_int64() || v.is_uint64() || v.is_double();
}

// Structural comparison; returns the path of the first difference, or nullopt when they match.
std::optional<std::string> difference(const json::value& expected, const json::value& actual,
                                      const std::string& path) {
  if (expected.is_string() && expected.get_string() == "<any>") return std::nullopt;
  if (is_number(expected) && is_number(actual)) {
    if (expected.is_double() || actual.is_double()) {
      if (expected.to_number<double>() == actual.to_number<double>()) return std::nullopt;
      return path;
    }
    if (expected.is_int64() && actual.is_int64()) {
      return expected.get_int64() == actual.get_int64() ? std::nullopt
                                                        : std::optional<std::string>(path);
    }
    return expected.to_number<double>() == actual.to_number<double>()
               ? std::nullopt
               : std::optional<std::string>(path);
  }
  if (expected.kind() != actual.kind()) return path;
  if (const auto* eo = expected.if_object()) {
    const auto& ao = actual.get_object();
    for (const auto& [key, value] : *eo) {
      const std::string sub = path + "." + std::string(key);
      const auto* av = ao.if_contains(key);
      if (!av) return sub + " (missing)";
      if (auto d = difference(value, *av, sub)) return d;
    }
    for (const auto& [key, value] : ao) {
      if (!eo->contains(key)) return path + "." + std::string(key) + " (unexpected)";
    }
    return std::nullopt;
  }
  if (const auto* ea = expected.if_array()) {
    const auto& aa = actual.get_array();
    for (std::size_t i = 0; i < std::min(ea->size(), aa.size()); ++i) {
      if (auto d = difference((*ea)[i], aa[i], fmt::format("{}[{}]", path, i))) return d;
    }
    if (ea->size() != aa.size()) {
      return fmt::format("{} (length {} instead of {})", path, aa.size(), ea->size());
    }
    return std::nullopt;
  }
  if (expected == actual) return std::nullopt;
  return path;
}

struct Line {
  std::size_t number;
  std::string text;
};

struct TranscriptResult {
  std::string failure;  // empty when the transcript passed
  std::size_t exchanges = 0;
};

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

std::optional<std::size_t> directive(const std::string& line, std::string_view key) {
  const std::string prefix = fmt::format("# {}:", key);
  if (line.rfind(prefix, 0) != 0) return std::nullopt;
  return static_cast<std::size_t>(std::stoull(line.substr(prefix.size())));
}

TranscriptResult run_transcript(const fs::path& file) {
  TranscriptResult out;
  const std::string name = file.filename().string();
  const bool record = env_set("MCPCLASS_TRANSCRIPT_RECORD");
  std::ifstream in(file);
  if (!in) return {fmt::format("{}: cannot open", file.string())};
  std::vector<Line> lines;
  std::string text;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    lines.push_back({n, text});
  }

  ServerOptions options;
  options.name = std::string(mcpclass::fixture::kFixtureServerName);
  options.version = std::string(mcpclass::fixture::kFixtureServerVersion);
  for (const auto& line : lines) {
    if (auto v = directive(line.text, "page_size")) options.page_size = *v;
    if (auto v = directive(line.text, "client_request_timeout_ms")) {
      options.client_request_timeout = std::chrono::milliseconds(*v);
    }
  }
  mcpclass::util::ThreadPool pool(4);
  auto server = Server::create(options, pool.executor());
  register_conformance_fixture(*server);
  auto session = server->create_session();
  Recorder recorder;
  std::vector<std::shared_ptr<TestStream>> streams;

  auto fail = [&](const Line& line, std::string message) {
    return fmt::format("{}:{}: {}\n  line: {}", file.string(), line.number, message, line.text);
  };
  auto finish = [&](std::string failure) {
    session->close();
    pool.stop();
    out.failure = std::move(failure);
    return out;
  };

  for (const auto& line : lines) {
    const std::string& t = line.text;
    if (t.empty()) continue;
    if (t[0] == '#') {
      if (auto ms = directive(t, "sleep_ms"))
        std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
      if (record) std::cout << t << '\n';
      continue;
    }
    if (t.rfind(">> ", 0) == 0 || t.rfind("> ", 0) == 0) {
      const bool wait = t[1] != '>';
      const std::string payload = t.substr(wait ? 2 : 3);
      auto stream = std::make_shared<TestStream>(recorder, fmt::format("{}:{}", name, line.number));
      streams.push_back(stream);
      if (record) std::cout << t << '\n';
      session->handle(std::string_view(payload), stream);
      ++out.exchanges;
      if (wait && !stream->wait_settled(kWaitLimit)) {
        return finish(fail(line,
                           "the server neither answered nor asked the client anything "
                           "within 10 s"));
      }
      if (record && wait) {
        for (const auto& m : recorder.drain()) std::cout << "< " << json::serialize(m) << '\n';
      }
      continue;
    }
    if (t.rfind("< ", 0) == 0) {
      if (record) continue;
      json::value expected;
      try {
        expected = json::parse(t.substr(2));
      } catch (const std::exception& e) {
        return finish(fail(line, fmt::format("the expected message is not JSON: {}", e.what())));
      }
      auto actual = recorder.pop(kWaitLimit);
      if (!actual) return finish(fail(line, "expected a message, got none within 10 s"));
      if (auto where = difference(expected, *actual, "$")) {
        return finish(
            fail(line, fmt::format("mismatch at {}\n  expected: {}\n  actual:   {}", *where,
                                   json::serialize(expected), json::serialize(*actual))));
      }
      continue;
    }
    return finish(fail(line, "unknown line; expected '> ', '>> ', '< ' or '#'"));
  }

  const Line end{lines.size() + 1, "<end of file>"};
  for (const auto& stream : streams) {
    if (!stream->wait_closed(kWaitLimit)) {
      return finish(
          fail(end, fmt::format("the stream of the message at {} never closed", stream->origin())));
    }
  }
  // Anything a handler still sends now (it should not) arrives within its remaining sleeps.
  std::this_thread::sleep_for(20ms);
  std::string failure;
  for (const auto& extra : recorder.drain()) {
    if (record) {
      std::cout << "< " << json::serialize(extra) << '\n';
      continue;
    }
    failure += fmt::format("\n  unexpected: {}", json::serialize(extra));
  }
  for (const auto& v : recorder.violations()) failure += "\n  engine contract: " + v;
  if (!failure.empty()) return finish(fail(end, "the server sent more than expected:" + failure));
  return finish({});
}

std::vector<fs::path> transcript_files() {
  std::vector<fs::path> files;
  const char* only = std::getenv("MCPCLASS_TRANSCRIPT");
  for (const auto& entry : fs::directory_iterator(MCPCLASS_TRANSCRIPTS_DIR)) {
    if (entry.path().extension() != ".jsonl") continue;
    if (only && *only && entry.path().filename().string().find(only) == std::string::npos) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("transcripts: golden JSON-RPC conversations with the conformance fixture") {
  const auto files = transcript_files();
  if (!std::getenv("MCPCLASS_TRANSCRIPT")) CHECK(files.size() >= 30);
  for (const auto& file : files) {
    const TranscriptResult result = run_transcript(file);
    CHECK_MESSAGE(result.failure.empty(), result.failure);
    const std::string empty_file = file.string() + " sends nothing";
    CHECK_MESSAGE(result.exchanges > 0, empty_file);
  }
}

TEST_CASE("transcripts: the runner itself notices wrong, missing and extra messages") {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("mcpclass-transcripts-{}", ::getpid());
  fs::create_directories(dir);
  auto run = [&](const std::string& body) {
    const fs::path file = dir / "t.jsonl";
    std::ofstream(file) << body;
    return run_transcript(file).failure;
  };
  const std::string ping = R"(> {"jsonrpc":"2.0","id":1,"method":"ping"})"
                           "\n";
  CHECK(run(ping + R"(< {"jsonrpc":"2.0","id":1,"result":{}})"
                   "\n")
            .empty());
  CHECK(run(ping + R"(< {"result":{},"id":1,"jsonrpc":"2.0"})"
                   "\n")
            .empty());
  CHECK(run(ping + R"(< {"jsonrpc":"2.0","id":"<any>","result":{}})"
                   "\n")
            .empty());
  // A wrong id, a missing message and an unexpected one all fail, naming the line.
  CHECK(run(ping + R"(< {"jsonrpc":"2.0","id":2,"result":{}})"
                   "\n")
            .find("t.jsonl:2:") != std::string::npos);
  CHECK(run(ping + R"(< {"jsonrpc":"2.0","id":1,"result":{"x":1}})"
                   "\n")
            .find("$.result.x") != std::string::npos);
  CHECK_FALSE(run(ping).empty());
  fs::remove_all(dir);
}

TEST_CASE("transcripts: cancellation stops a running tool handler") {
  mcpclass::util::ThreadPool pool(2);
  auto server = Server::create({}, pool.executor());
  register_conformance_fixture(*server);
  std::atomic<bool> started{false}, saw_cancel{false}, finished{false};
  std::atomic<long long> ran_ms{0};
  server->add_tool(mcpclass::server::Tool{
      .name = "test_cancel_probe",
      .title = {},
      .description = "Sleeps until cancelled (at most 5 s) and records what it saw",
      .input_schema = {{"type", "object"}, {"properties", json::object{}}},
      .output_schema = {},
      .annotations = {},
      .handler =
          [&](const json::object&, mcpclass::server::RequestContext& ctx) {
            const auto t0 = std::chrono::steady_clock::now();
            started = true;
            while (std::chrono::steady_clock::now() - t0 < 5s && ctx.sleep_for(10ms)) {
            }
            saw_cancel = ctx.cancelled();
            ran_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
            finished = true;
            return mcpclass::server::ToolResult::text("finished");
          },
      .run_inline = false,
      .admit = {}});
  auto session = server->create_session();
  initialize(*session);

  auto call = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"test_cancel_probe"}})",
      call);
  for (int i = 0; i < 500 && !started; ++i) std::this_thread::sleep_for(2ms);
  REQUIRE(started);
  CHECK(session->in_flight() == 1);
  auto note = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}})",
      note);
  CHECK(note->closes == 1);
  CHECK_FALSE(note->final);
  for (int i = 0; i < 1000 && !finished; ++i) std::this_thread::sleep_for(2ms);
  REQUIRE(finished);
  CHECK(saw_cancel);
  CHECK(ran_ms < 1000);
  pool.stop();
  // The cancelled request's stream closed exactly once, with no response.
  CHECK(call->closes == 1);
  CHECK_FALSE(call->final);
  CHECK(call->sent.empty());
  CHECK(session->in_flight() == 0);
}

TEST_CASE("transcripts: closing a session cancels its handlers and fails its client requests") {
  mcpclass::util::ThreadPool pool(2);
  auto server = Server::create({}, pool.executor());
  register_conformance_fixture(*server);
  auto session = server->create_session();
  auto init = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}})",
      init);
  REQUIRE(init->wait_closed(5s));
  auto call = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}})",
      call);
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(call->mutex_);
      if (!call->sent.empty()) break;
    }
    std::this_thread::sleep_for(2ms);
  }
  const auto t0 = std::chrono::steady_clock::now();
  session->close();
  pool.stop();  // the handler must return promptly instead of waiting 60 s for the client
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  CHECK(call->closes == 1);
  CHECK_FALSE(call->final);
  CHECK(session->state() == Session::State::closed);
}

TEST_CASE("transcripts: list_changed and resources/updated go to the notification stream") {
  mcpclass::util::ThreadPool pool(1);
  auto server = Server::create({}, pool.executor());
  register_conformance_fixture(*server);
  auto session = server->create_session();
  auto standalone = std::make_shared<CollectingStream>();
  session->set_notification_stream(standalone);
  initialize(*session);
  REQUIRE(standalone->sent.empty());

  server->add_tool(
      mcpclass::server::Tool{.name = "late_tool",
                             .title = {},
                             .description = "added after initialize",
                             .input_schema = {{"type", "object"}, {"properties", json::object{}}},
                             .output_schema = {},
                             .annotations = {},
                             .handler =
                                 [](const json::object&, mcpclass::server::RequestContext&) {
                                   return mcpclass::server::ToolResult::text("x");
                                 },
                             .run_inline = true,
                             .admit = {}});
  REQUIRE(standalone->sent.size() == 1);
  CHECK(standalone->sent[0] ==
        json::parse(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})"));
  CHECK(server->remove_tool("late_tool"));
  CHECK(standalone->sent.size() == 2);

  server->notify_resource_updated("test://watched-resource");
  CHECK(standalone->sent.size() == 2);  // not subscribed yet
  auto sub = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}})",
      sub);
  REQUIRE(sub->wait_closed(5s));
  server->notify_resource_updated("test://watched-resource");
  REQUIRE(standalone->sent.size() == 3);
  CHECK(
      standalone->sent[2] ==
      json::parse(
          R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}})"));
  auto unsub = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"test://watched-resource"}})",
      unsub);
  REQUIRE(unsub->wait_closed(5s));
  server->notify_resource_updated("test://watched-resource");
  CHECK(standalone->sent.size() == 3);
  session->close();
  pool.stop();
}

TEST_CASE("transcripts property: random messages to a session always close their stream once") {
  // Random but well-formed-ish JSON-RPC traffic against the fixture: whatever arrives, every
  // message's stream is closed exactly once, nothing is sent after close, and every final
  // payload is a JSON-RPC response (or a batch of them).
  ServerOptions options;
  options.client_request_timeout = 20ms;
  mcpclass::util::ThreadPool pool(2);
  auto server = Server::create(options, pool.executor());
  register_conformance_fixture(*server);
  std::mt19937_64 rng(0x5eed0005);
  const char* methods[] = {"initialize",
                           "ping",
                           "tools/list",
                           "tools/call",
                           "resources/list",
                           "resources/read",
                           "resources/templates/list",
                           "resources/subscribe",
                           "resources/unsubscribe",
                           "prompts/list",
                           "prompts/get",
                           "completion/complete",
                           "logging/setLevel",
                           "server/discover",
                           "notifications/initialized",
                           "notifications/cancelled",
                           "nope"};
  const char* names[] = {"test_simple_text",           "test_sampling",
                         "test_elicitation",           "test_simple_prompt",
                         "test_prompt_with_arguments", "missing"};
  auto random_value = [&](int pick) -> json::value {
    switch (pick % 7) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<std::int64_t>(rng() % 5);
      case 2:
        return names[rng() % std::size(names)];
      case 3:
        return json::array{1, "x"};
      case 4:
        return json::object{{"prompt", "p"}, {"message", "m"}, {"arg1", "a"}, {"arg2", "b"}};
      case 5:
        return "test://template/7/data";
      default:
        return json::object{};
    }
  };
  Recorder recorder;
  std::vector<std::shared_ptr<TestStream>> streams;
  for (int round = 0; round < 20; ++round) {
    auto session = server->create_session();
    for (int i = 0; i < 100; ++i) {
      json::object m{{"jsonrpc", "2.0"}};
      if (rng() % 5 != 0) m["id"] = static_cast<std::int64_t>(rng() % 20);
      m["method"] = methods[rng() % std::size(methods)];
      if (rng() % 4 != 0) {
        json::object params;
        const char* keys[] = {"name",     "arguments",       "uri",          "cursor",
                              "level",    "protocolVersion", "capabilities", "ref",
                              "argument", "requestId",       "_meta"};
        for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
          params[keys[rng() % std::size(keys)]] = random_value(static_cast<int>(rng()));
        }
        if (rng() % 3 == 0) params["capabilities"] = json::object{{"sampling", json::object{}}};
        m["params"] = std::move(params);
      }
      json::value message = m;
      if (rng() % 10 == 0) message = json::array{m, m};
      auto stream = std::make_shared<TestStream>(
          recorder, fmt::format("round {} message {}: {}", round, i, json::serialize(message)));
      streams.push_back(stream);
      session->handle(message, stream);
    }
    if (round % 2 == 0) session->close();
  }
  for (const auto& stream : streams) {
    CAPTURE(stream->origin());
    REQUIRE(stream->wait_closed(5s));
  }
  pool.stop();
  CHECK(recorder.violations().empty());
  for (const auto& v : recorder.violations()) MESSAGE(v);
  auto is_response = [](const json::value& v) {
    const auto* o = v.if_object();
    return o && o->contains("id") && (o->contains("result") != o->contains("error"));
  };
  for (const auto& m : recorder.drain()) {
    const auto* o = m.if_object();
    if (o && o->contains("method")) continue;  // progress, logs, requests to the client
    if (const auto* a = m.if_array()) {
      CHECK_FALSE(a->empty());
      for (const auto& item : *a) CHECK(is_response(item));
    } else {
      CHECK_MESSAGE(is_response(m), json::serialize(m));
    }
  }
}
