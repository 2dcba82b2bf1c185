// Servers: the classification tools plus host-defined tools, in-process calls, and the stdio and
// HTTP transports started and stopped from C.
#include "internal.hpp"

#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"
#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/service/http_front.hpp"
#include "mcpclass/transport/server/stdio.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

using namespace mcpclass;
using namespace mcpclass::capi;
namespace json = boost::json;

struct mcpc_tool_reply {
  std::optional<server::ToolResult> result;
};

namespace {

// Serves one stdio client. The caller's input descriptor is copied through a pipe by a pump
// thread, so that stop can end the input (close the pipe) without touching the caller's fds.
class StdioRunner {
 public:
  StdioRunner(std::shared_ptr<server::Server> server, int in_fd, int out_fd) : in_fd_(in_fd) {
    if (::pipe(data_) != 0) fail(MCPC_ERR_TRANSPORT, "pipe() failed");
    if (::pipe(wake_) != 0) {
      close_fd(data_[0]);
      close_fd(data_[1]);
      fail(MCPC_ERR_TRANSPORT, "pipe() failed");
    }
    pump_ = std::thread([this] { pump(); });
    serve_ = std::thread([this, server = std::move(server), out_fd] {
      transport::server::StdioOptions options;
      options.drain_timeout = std::chrono::milliseconds(10'000);
      transport::server::serve_stdio(server, data_[0], out_fd, options);
      std::lock_guard lock(mutex_);
      done_ = true;
      done_cv_.notify_all();
    });
  }
  ~StdioRunner() { stop(); }
  StdioRunner(const StdioRunner&) = delete;
  StdioRunner& operator=(const StdioRunner&) = delete;

  bool done() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  void wait() {
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return done_; });
  }
  /// Ends the input, lets the transport answer what is in flight, joins. Idempotent; one caller
  /// at a time (the server's transport mutex).
  void stop() {
    if (wake_[1] >= 0) {
      const char byte = 'x';
      [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
    }
    if (pump_.joinable()) pump_.join();
    if (serve_.joinable()) serve_.join();
    for (int* fd : {&data_[0], &wake_[0], &wake_[1]}) close_fd(*fd);
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  void pump() {
    char buffer[65536];
    for (;;) {
      pollfd fds[2] = {{in_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      const int n = ::poll(fds, 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (fds[1].revents & POLLIN) != 0) break;
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0) continue;
      const ssize_t got = ::read(in_fd_, buffer, sizeof buffer);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) break;
      if (!write_all(buffer, static_cast<std::size_t>(got))) break;
    }
    close_fd(data_[1]);  // end of input for serve_stdio
  }

  bool write_all(const char* data, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(data_[1], data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  int in_fd_;
  int data_[2] = {-1, -1};
  int wake_[2] = {-1, -1};
  std::thread pump_;
  std::thread serve_;
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
};

// Collects the final message of one in-process call.
class PromiseStream final : public server::Stream {
 public:
  void send(json::value) override {}  // progress and log notifications: no one to tell
  void close(std::optional<json::value> final_message) override {
    promise_.set_value(std::move(final_message));
  }
  std::future<std::optional<json::value>> future() { return promise_.get_future(); }

 private:
  std::promise<std::optional<json::value>> promise_;
};

// Owns a host tool's user_data; the last handler copy to go calls destroy.
struct HostTool {
  mcpc_tool_callback callback = nullptr;
  void* user_data = nullptr;
  mcpc_destroy_callback destroy = nullptr;
  std::string name;

  HostTool() = default;
  HostTool(const HostTool&) = delete;
  HostTool& operator=(const HostTool&) = delete;
  ~HostTool() {
    if (destroy != nullptr) destroy(user_data);
  }
};

bool fd_open(int fd) {
  return fd >= 0 && ::fcntl(fd, F_GETFD) != -1;
}

}  // namespace

struct mcpc_server {
  std::unique_ptr<service::ClassificationService> service;
  std::shared_ptr<server::Server> server;

  std::mutex transport_mutex;  // start/stop of transports
  std::shared_ptr<StdioRunner> stdio;
  std::unique_ptr<transport::server::HttpServer> http;
  std::atomic<int> http_port{0};

  void stop_transports() {
    std::lock_guard lock(transport_mutex);
    if (http) {
      http->stop();
      http.reset();
      http_port = 0;
    }
    if (stdio) {
      stdio->stop();
      stdio.reset();
    }
  }

  ~mcpc_server() {
    stop_transports();
    server.reset();
    service.reset();  // finishes the calls still queued
  }
};

extern "C" {

int mcpc_server_new(const mcpc_config* config, const mcpc_classifier* classifier, mcpc_server** out,
                    mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    std::unique_ptr<config::Config> storage;
    if (config == nullptr) storage = std::make_unique<config::Config>(config::default_config());
    const config::Config& cfg = config != nullptr ? config->config : *storage;

    auto s = std::make_unique<mcpc_server>();
    s->service = std::make_unique<service::ClassificationService>(
        cfg, classifier != nullptr ? classifier->classifier : nullptr);
    s->server = s->service->server();
    *out = s.release();
    return MCPC_OK;
  });
}

int mcpc_server_reload(mcpc_server* server, const mcpc_config* config, uint64_t* generation,
                       mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    require(config, "config");
    const auto result = server->service->reload([&] { return config->config; });
    if (generation != nullptr) *generation = result.generation;
    if (!result.ok) throw classify::ConfigError(result.error);
    return MCPC_OK;
  });
}

void mcpc_server_free(mcpc_server* server) {
  delete server;
}

int mcpc_tool_reply_text(mcpc_tool_reply* reply, const char* text, size_t text_len, bool is_error,
                         mcpc_error** err) {
  return guard(err, [&] {
    require(reply, "reply");
    reply->result =
        server::ToolResult::text(std::string(text_arg(text, text_len, "text")), is_error);
    return MCPC_OK;
  });
}

int mcpc_tool_reply_structured(mcpc_tool_reply* reply, const char* json_text, size_t json_len,
                               mcpc_error** err) {
  return guard(err, [&] {
    require(reply, "reply");
    const std::string_view text = text_arg(json_text, json_len, "json");
    boost::system::error_code ec;
    json::value value = json::parse(text, ec);
    if (ec) fail(MCPC_ERR_INVALID_ARGUMENT, "json is malformed: " + ec.message());
    if (!value.is_object()) fail(MCPC_ERR_INVALID_ARGUMENT, "json must be an object");
    server::ToolResult result = server::ToolResult::text(json::serialize(value));
    result.structured_content = std::move(value);
    reply->result = std::move(result);
    return MCPC_OK;
  });
}

int mcpc_server_add_tool(mcpc_server* server, const char* name, const char* description,
                         const char* input_schema_json, mcpc_tool_callback callback,
                         void* user_data, mcpc_destroy_callback destroy, mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    require(name, "name");
    if (callback == nullptr) fail(MCPC_ERR_INVALID_ARGUMENT, "callback must not be NULL");
    if (name[0] == '\0') fail(MCPC_ERR_INVALID_ARGUMENT, "name must not be empty");

    server::Tool tool;
    tool.name = name;
    if (description != nullptr) tool.description = description;
    if (input_schema_json != nullptr) {
      boost::system::error_code ec;
      json::value schema = json::parse(input_schema_json, ec);
      if (ec) fail(MCPC_ERR_INVALID_ARGUMENT, "input_schema_json is malformed: " + ec.message());
      if (!schema.is_object()) {
        fail(MCPC_ERR_INVALID_ARGUMENT, "input_schema_json must be a JSON object");
      }
      tool.input_schema = std::move(schema).as_object();
    } else {
      tool.input_schema = json::object{{"type", "object"}};
    }

    auto host = std::make_shared<HostTool>();
    host->callback = callback;
    host->user_data = user_data;
    host->name = name;
    tool.handler = [host](const json::object& arguments, server::RequestContext&) {
      const std::string text = json::serialize(arguments);
      mcpc_tool_reply reply;
      host->callback(host->user_data, text.c_str(), text.size(), &reply);
      if (!reply.result) {
        return server::ToolResult::error("tool " + host->name + " returned no result");
      }
      return std::move(*reply.result);
    };
    try {
      server->server->add_tool(std::move(tool));
    } catch (const std::invalid_argument& e) {
      fail(MCPC_ERR_INVALID_ARGUMENT, e.what());  // `host` never owned user_data: no destroy
    }
    host->destroy = destroy;  // from now on the tool owns user_data
    return MCPC_OK;
  });
}

int mcpc_server_remove_tool(mcpc_server* server, const char* name, mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    require(name, "name");
    if (!server->server->remove_tool(name)) {
      fail(MCPC_ERR_NOT_FOUND, std::string("no tool named \"") + name + "\"");
    }
    return MCPC_OK;
  });
}

int mcpc_server_call(mcpc_server* server, const char* request_json, size_t request_len,
                     char** out_json, mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(server, "server");
    const std::string_view request = text_arg(request_json, request_len, "request_json");
    server::SessionOptions options;
    options.require_initialize = false;
    auto session = server->server->create_session(options);
    auto stream = std::make_shared<PromiseStream>();
    auto answer = stream->future();
    session->handle(request, stream);
    std::optional<json::value> response = answer.get();
    session->close();
    if (response) *out_json = dup_string(json::serialize(*response));
    return MCPC_OK;
  });
}

int mcpc_server_start_stdio(mcpc_server* server, int in_fd, int out_fd, mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    if (!fd_open(in_fd))
      fail(MCPC_ERR_TRANSPORT, "in_fd " + std::to_string(in_fd) + " is not open");
    if (!fd_open(out_fd)) {
      fail(MCPC_ERR_TRANSPORT, "out_fd " + std::to_string(out_fd) + " is not open");
    }
    std::lock_guard lock(server->transport_mutex);
    if (server->stdio) {
      if (!server->stdio->done()) fail(MCPC_ERR_STATE, "the stdio transport is already running");
      server->stdio->stop();  // ended at end of input: join before starting anew
      server->stdio.reset();
    }
    server->stdio = std::make_shared<StdioRunner>(server->server, in_fd, out_fd);
    return MCPC_OK;
  });
}

int mcpc_server_wait_stdio(mcpc_server* server, mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    std::shared_ptr<StdioRunner> runner;
    {
      std::lock_guard lock(server->transport_mutex);
      runner = server->stdio;
    }
    if (!runner) fail(MCPC_ERR_STATE, "the stdio transport is not running");
    runner->wait();
    return MCPC_OK;
  });
}

int mcpc_server_start_http(mcpc_server* server, const char* host, int port, int* out_port,
                           mcpc_error** err) {
  return guard(err, [&] {
    require(server, "server");
    if (port < -1 || port > 65535) {
      fail(MCPC_ERR_INVALID_ARGUMENT, "port " + std::to_string(port) + " is outside -1..65535");
    }
    std::lock_guard lock(server->transport_mutex);
    if (server->http) fail(MCPC_ERR_STATE, "the HTTP transport is already running");
    // The config document's http section (limits, TLS) applies; host and port may be overridden.
    transport::server::HttpServerOptions options = server->service->http_options();
    if (host != nullptr) options.host = host;
    if (port >= 0) options.port = static_cast<unsigned short>(port);
    auto http = service::make_http_front(
        *server->service, {.http = std::move(options), .stdio = nullptr, .spans = nullptr});
    try {
      http->start();
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      fail(MCPC_ERR_TRANSPORT, e.what());
    }
    server->http_port = http->port();
    server->http = std::move(http);
    if (out_port != nullptr) *out_port = server->http_port;
    return MCPC_OK;
  });
}

int mcpc_server_http_port(const mcpc_server* server) {
  return server == nullptr ? 0 : server->http_port.load();
}

void mcpc_server_stop(mcpc_server* server) {
  if (server == nullptr) return;
  try {
    server->stop_transports();
  } catch (...) {  // nothing may cross; stopping is best effort
  }
}

}  // extern "C"
