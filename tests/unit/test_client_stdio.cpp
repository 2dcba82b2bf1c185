// Real processes: the stdio client transport and the remote classifier against our own
// `mcpclass serve --stdio` and against a misbehaving fake server (tests/client/
// fake_classifier_server.py): killed mid-call, dying, slow, malformed, low confidence. Every test
// checks that no child process is left behind.
#include "mcpclass/classify/composite_classifier.hpp"
#include "mcpclass/client/client.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/stdio.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace mcpclass;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

const std::string kMcpclass = std::string(MCPCLASS_BINARY_DIR) + "/mcpclass";
const std::string kFake =
    std::string(MCPCLASS_SOURCE_DIR) + "/tests/client/fake_classifier_server.py";

/// Our live child processes (zombies included), from /proc.
int children() {
  int n = 0;
  const std::string me = std::to_string(::getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == me) ++n;
  }
  return n;
}

remote::RemoteClassifierOptions fake(const std::string& mode, int delay_ms = 5000) {
  remote::RemoteClassifierOptions o;
  o.command = {"python3", kFake};
  o.env = {{"FAKE_MODE", mode}, {"FAKE_DELAY_MS", std::to_string(delay_ms)}};
  o.timeout = 3s;
  o.retry_backoff = 20ms;
  o.max_retries = 1;
  return o;
}

template <typename E, typename F>
std::chrono::milliseconds throws_after(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(f(), E);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

}  // namespace

TEST_CASE("stdio client: spawns mcpclass serve --stdio, talks, and reaps it on close") {
  const int before = children();
  transport::client::StdioClientOptions so;
  so.command = {kMcpclass, "serve", "--stdio"};
  auto t = std::make_shared<transport::client::StdioClientTransport>(so);
  {
    client::Client c(t);
    const auto& d = c.connect();
    CHECK(d.server_info.at("name").as_string() == "mcpclass");
    const int pid = t->pid();
    CHECK(pid > 0);
    const auto tools = c.list_tools();
    CHECK(tools.at(0).as_object().at("name").as_string() == "classify_text");
    c.close();
    CHECK(::kill(pid, 0) == -1);          // gone and reaped
    CHECK(t->exit_status().has_value());  // reaped (stdin EOF asks it to exit)
  }
  CHECK(children() == before);
}

TEST_CASE("stdio client: exit is detected and reported, stderr is read as logs") {
  std::mutex m;
  std::string closed, logs;
  transport::client::StdioClientOptions so;
  so.command = {"sh", "-c", "echo 'starting up' >&2; exit 3"};
  transport::client::StdioClientTransport t(so);
  client::TransportHandlers h;
  h.on_closed = [&](std::string reason) {
    std::lock_guard lock(m);
    closed = reason;
  };
  h.on_log = [&](std::string_view line) {
    std::lock_guard lock(m);
    logs += std::string(line) + "\n";
  };
  t.start(h);
  for (int i = 0; i < 200 && t.is_open(); ++i) std::this_thread::sleep_for(10ms);
  t.close();
  std::lock_guard lock(m);
  CHECK(closed.find("status 3") != std::string::npos);
  CHECK(logs.find("starting up") != std::string::npos);
  CHECK(t.exit_status() == 3);
}

TEST_CASE("stdio client: a program that does not exist is a TransportError") {
  transport::client::StdioClientOptions so;
  so.command = {"/nonexistent/mcp-server"};
  transport::client::StdioClientTransport t(so);
  CHECK_THROWS_AS(t.start({}), client::TransportError);
}

TEST_CASE("stdio client: command lines split like a shell, without expansion") {
  CHECK(transport::client::split_command_line(R"(node "a b.js" --x='1 2' c\ d $HOME)") ==
        std::vector<std::string>{"node", "a b.js", "--x=1 2", "c d", "$HOME"});
  CHECK_THROWS(transport::client::split_command_line("unterminated 'quote"));
}

TEST_CASE("remote over stdio: our own mcpclass serve --stdio classifies like the local one") {
  const int before = children();
  {
    remote::RemoteClassifierOptions o;
    o.command = {kMcpclass, "serve", "--stdio"};
    const remote::RemoteClassifier remote(o);
    const auto local = config::make_classifier(config::default_config());
    const char* text = "solve the integral of x squared with calculus and algebra";
    const auto l = local->classify(text, {true});
    const auto r = remote.classify(text);
    CHECK(r.confidence == doctest::Approx(l.confidence));
    CHECK(r.category == (l.confidence >= 0.5 ? l.category : "other"));
  }
  CHECK(children() == before);
}

TEST_CASE("remote over stdio: auto-discovers categorize_text and applies the threshold") {
  const remote::RemoteClassifier remote(fake("lowconf"));
  CHECK(remote.tool_name() == "categorize_text");
  CHECK(remote.categories().size() == 3);  // "other" offered by the server itself
  const auto r = remote.classify("anything");
  CHECK(r.category == "other");
  CHECK(r.confidence == doctest::Approx(0.4));
}

TEST_CASE("remote over stdio: a malformed result is an InvalidResult, not retried") {
  for (const char* mode : {"malformed", "notjson"}) {
    CAPTURE(mode);
    const remote::RemoteClassifier remote(fake(mode));
    const auto elapsed = throws_after<remote::RemoteInvalidResult>([&] { remote.classify("x"); });
    CHECK(elapsed < 1s);
    CHECK(remote.info().at("retries").as_uint64() == 0);
  }
}

TEST_CASE("remote over stdio: a slow server times out within 10% of the timeout") {
  auto o = fake("slow", 10'000);
  o.timeout = 1000ms;
  o.max_retries = 0;
  const int before = children();
  {
    const remote::RemoteClassifier remote(o);
    const auto elapsed = throws_after<remote::RemoteTimeout>([&] { remote.classify("x"); });
    CHECK(elapsed >= 1000ms);
    CHECK(elapsed <= 1100ms);
  }
  CHECK(children() == before);  // the hung server was killed on close
}

TEST_CASE("remote over stdio: a server dying mid-call → retry → unreachable → local fallback") {
  const int before = children();
  {
    auto remote = std::make_shared<remote::RemoteClassifier>(fake("die"));
    const auto elapsed = throws_after<remote::RemoteUnreachable>([&] { remote->classify("x"); });
    CHECK(elapsed < 3s);
    CHECK(remote->info().at("retries").as_uint64() == 1);

    auto local = config::make_classifier(config::default_config());
    const std::shared_ptr<const classify::Classifier> shared_local(std::move(local));
    classify::CompositeClassifier composite(shared_local, remote,
                                            {classify::CompositeMode::remote_first, 0.6});
    const auto r = composite.classify("solve the integral of x squared");
    CHECK(r.category == shared_local->classify("solve the integral of x squared").category);
  }
  CHECK(children() == before);
}

TEST_CASE("remote over stdio: a server killed mid-call → retry → timeout → fallback, no leak") {
  const int before = children();
  {
    auto o = fake("slow", 10'000);
    o.timeout = 700ms;
    o.max_retries = 1;
    transport::client::StdioClientOptions so;
    so.command = o.command;
    so.env = o.env;
    auto t = std::make_shared<transport::client::StdioClientTransport>(so);
    auto remote = std::make_shared<remote::RemoteClassifier>(o, t);
    const int first = t->pid();
    std::thread killer([&] {
      std::this_thread::sleep_for(200ms);
      ::kill(first, SIGKILL);
    });
    // Attempt 1: the server is killed → unreachable. Attempt 2: a restarted server that is slow
    // too → timeout. The error is the last one.
    const auto elapsed = throws_after<remote::RemoteTimeout>([&] { remote->classify("x"); });
    killer.join();
    CHECK(elapsed < 2500ms);
    CHECK(t->pid() != first);  // restarted

    const auto local = std::shared_ptr<const classify::Classifier>(
        config::make_classifier(config::default_config()));
    classify::CompositeClassifier composite(local, remote,
                                            {classify::CompositeMode::remote_first, 0.6});
    CHECK_FALSE(composite.classify("history of rome").category.empty());
  }
  CHECK(children() == before);
}

TEST_CASE("remote over stdio: the circuit breaker opens after repeated failures") {
  auto o = fake("die");
  o.max_retries = 0;
  o.breaker_failures = 2;
  o.breaker_open = 60s;
  const remote::RemoteClassifier remote(o);
  CHECK_THROWS_AS(remote.classify("x"), remote::RemoteUnreachable);
  CHECK_THROWS_AS(remote.classify("x"), remote::RemoteUnreachable);
  const auto elapsed = throws_after<remote::RemoteCircuitOpen>([&] { remote.classify("x"); });
  CHECK(elapsed < 50ms);  // not attempted
  CHECK(remote.info().at("circuit").as_string() == "open");
}

TEST_CASE("remote over stdio: an unreachable server fails the constructor clearly") {
  remote::RemoteClassifierOptions o;
  o.command = {"/nonexistent/server"};
  o.max_retries = 0;
  CHECK_THROWS_AS(remote::RemoteClassifier{o}, remote::RemoteUnreachable);
}

TEST_CASE("remote over stdio: categories are cached, refreshed on list_changed and on interval") {
  // The fake adds a category ("v1", "v2", ...) on every list_categories call, so the last
  // category's name tells how many times the classifier fetched them.
  auto last = [](const remote::RemoteClassifier& c) { return c.categories().names().back(); };
  auto with_fallback_none = [](remote::RemoteClassifierOptions o) {
    o.fallback_category = "other";  // already offered by the server: nothing appended
    return o;
  };

  SUBCASE("cached: repeated calls do not refetch") {
    remote::RemoteClassifier c(with_fallback_none(fake("changing")));
    CHECK(last(c) == "v1");
    for (int i = 0; i < 3; ++i) CHECK(c.classify("2 + 2").category == "math");
    CHECK(last(c) == "v1");
  }
  SUBCASE("notifications/tools/list_changed marks them stale; the next call refetches") {
    remote::RemoteClassifier c(with_fallback_none(fake("changing")));
    CHECK(c.classify("please notify").category == "math");
    CHECK(last(c) == "v1");  // the notification arrived with this answer
    CHECK(c.classify("2 + 2").category == "math");
    CHECK(last(c) == "v2");
    CHECK(c.classify("2 + 2").category == "math");
    CHECK(last(c) == "v2");
  }
  SUBCASE("refresh_interval elapsed: the next call refetches") {
    auto o = with_fallback_none(fake("changing"));
    o.refresh_interval = 50ms;
    remote::RemoteClassifier c(o);
    std::this_thread::sleep_for(120ms);
    c.classify("2 + 2");
    CHECK(last(c) == "v2");
  }
  SUBCASE("cache_categories: false refetches on every call") {
    auto o = with_fallback_none(fake("changing"));
    o.cache_categories = false;
    remote::RemoteClassifier c(o);
    c.classify("2 + 2");
    c.classify("2 + 2");
    CHECK(last(c) == "v3");
  }
  SUBCASE("refresh_categories() fetches on demand; old references stay valid") {
    remote::RemoteClassifier c(with_fallback_none(fake("changing")));
    const auto& before = c.categories();
    c.refresh_categories();
    CHECK(last(c) == "v2");
    CHECK(before.names().back() == "v1");
  }
}
