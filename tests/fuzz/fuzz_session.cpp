// libFuzzer target: the whole server engine with the conformance fixture. The input is a
// sequence of messages, one per line, handled in order on one session (so initialize, then
// tools/call, cancellations, answers to the server's own requests... in any order). Handlers run
// on a small thread pool; after each message the target waits until its stream settles (closed,
// or the server asked the client something) or its handler has started (the fixture's slow tools
// sleep), at most a few milliseconds. At the end it closes the session and checks the Stream
// contract: every stream closed exactly once, nothing sent after close, every outgoing message
// serializable, and no handler still running a few seconds later (a hang).
#include "conformance_fixture.hpp"

#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"
#include "mcpclass/util/executor.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using mcpclass::server::Server;
using mcpclass::server::ServerOptions;
using mcpclass::server::Stream;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_session: %s\n", what.c_str());
  std::abort();
}

// A thread pool that knows how many of its jobs are still queued or running.
class CountingPool {
 public:
  CountingPool() : pool_(2) {}
  mcpclass::util::Executor executor() {
    return [this](std::function<void()> job) {
      {
        std::lock_guard lock(mutex_);
        ++busy_;
        ++posted_;
      }
      pool_.post([this, job = std::move(job)] {
        {
          std::lock_guard lock(mutex_);
          ++started_;
        }
        job();
        std::lock_guard lock(mutex_);
        if (--busy_ == 0) idle_.notify_all();
      });
    };
  }
  // Whether every job posted so far has begun running (or finished).
  bool all_started() {
    std::lock_guard lock(mutex_);
    return started_ == posted_;
  }
  bool wait_idle(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, limit, [&] { return busy_ == 0; });
  }

 private:
  mcpclass::util::ThreadPool pool_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t busy_ = 0;
  std::size_t posted_ = 0;
  std::size_t started_ = 0;
};

class FuzzStream final : public Stream {
 public:
  void send(json::value message) override {
    (void)json::serialize(message);
    const auto* o = message.if_object();
    std::lock_guard lock(mutex_);
    if (closed_) fail("send after close: " + json::serialize(message));
    if (o && o->contains("method") && o->contains("id")) asked_ = true;
    cv_.notify_all();
  }
  void close(std::optional<json::value> final_message) override {
    if (final_message) (void)json::serialize(*final_message);
    std::lock_guard lock(mutex_);
    if (closed_) fail("stream closed twice");
    closed_ = true;
    cv_.notify_all();
  }
  // Whether it settled (closed, or the server asked the client something) within `limit`.
  bool wait_settled(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return closed_ || asked_; });
  }
  bool closed() {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool asked_ = false;
};

struct Engine {
  CountingPool pool;
  std::shared_ptr<Server> server;
  Engine() {
    ServerOptions options;
    options.name = std::string(mcpclass::fixture::kFixtureServerName);
    options.version = std::string(mcpclass::fixture::kFixtureServerVersion);
    options.page_size = 3;  // exercise pagination cursors
    options.client_request_timeout = 200ms;
    server = Server::create(options, pool.executor());
    register_conformance_fixture(*server);
  }
};

// Deliberately leaked: libFuzzer exits without unwinding, and the pool's threads must outlive
// every input.
Engine& engine() {
  static Engine* e = new Engine();
  return *e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  Engine& e = engine();
  auto session = e.server->create_session();
  std::vector<std::shared_ptr<FuzzStream>> streams;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty() && streams.size() < 64) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.empty()) continue;
    auto stream = std::make_shared<FuzzStream>();
    streams.push_back(stream);
    session->handle(line, stream);
    // Until the stream settles, or else until every handler posted so far has started (checked
    // each millisecond: a slow tool is then sleeping, and the next message finds it so), at most
    // 5 ms. A flat 5 ms wait per slow tool call was most of this target's time.
    for (int ms = 0; ms < 5 && !stream->wait_settled(1ms); ++ms) {
      if (e.pool.all_started()) break;
    }
  }
  session->close();
  if (!e.pool.wait_idle(10s)) fail("handlers still running 10 s after session close (hang)");
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (!streams[i]->closed()) fail("stream of message " + std::to_string(i + 1) + " never closed");
  }
  return 0;
}
