// A request being served: its context for the handler, its stream, its cancellation.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/request_context.hpp"
#include "mcpclass/server/stream.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>

namespace mcpclass::server {

class Session;

/// A server→client request waiting for the client's answer.
struct PendingClientRequest {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<jsonrpc::Response> response;
};

class InFlight final : public RequestContext {
 public:
  InFlight(std::weak_ptr<Session> session, jsonrpc::Request request, StreamPtr out,
           std::shared_ptr<const ClientInfo> client, bool stateless);

  const jsonrpc::Id& id() const override { return request_.id; }
  const std::string& method() const override { return request_.method; }
  const ClientInfo& client() const override { return *client_; }
  const std::optional<util::TraceParent>& trace_parent() const override { return trace_parent_; }
  std::stop_token stop_token() const override { return stop_.get_token(); }

  void progress(double progress, std::optional<double> total, std::string_view message) override;
  void log(LogLevel level, json::value data, std::string_view logger) override;
  void notify(std::string_view method, json::value params) override;
  bool close_sse_stream() override;
  json::value request(std::string_view method, json::value params,
                      std::optional<std::chrono::milliseconds> timeout) override;

  const json::value& params() const { return request_.params; }
  /// params as an object ({} when absent); throws kInvalidParams for an array.
  const json::object& params_object() const;
  /// True for requests of the stateless revision (results get resultType and friends).
  bool stateless() const { return stateless_; }

  /// Sends on the stream unless the request already finished.
  void send(json::value message);
  /// Closes the stream once; later calls do nothing. Returns whether this call closed it.
  bool close(std::optional<json::value> final_message);
  void cancel() { stop_.request_stop(); }

 private:
  std::weak_ptr<Session> session_;
  jsonrpc::Request request_;
  StreamPtr out_;
  std::shared_ptr<const ClientInfo> client_;
  bool stateless_;
  std::optional<json::value> progress_token_;
  std::optional<util::TraceParent> trace_parent_;
  std::stop_source stop_;
  std::mutex out_mutex_;
  bool closed_ = false;
};

}  // namespace mcpclass::server
