// The MCP server engine: registries of tools, resources and prompts, shared by the sessions that
// serve clients. It knows no sockets: transports feed sessions messages and get messages back.
// Thread-safety: every method may be called from any thread; registry changes are visible to
// requests that start afterwards and announced to sessions with list_changed notifications.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/resource.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/util/executor.hpp"
#include "mcpclass/version.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace mcpclass::server {

class Session;
struct Registry;

struct ServerOptions {
  std::string name = "mcpclass";
  std::string title;
  std::string version = kVersion;
  std::string instructions;
  /// Items per page of tools/list, resources/list, resources/templates/list and prompts/list.
  std::size_t page_size = 100;
  jsonrpc::ParseLimits limits;
  /// How long a handler waits for the client to answer a server→client request.
  std::chrono::milliseconds client_request_timeout{60'000};
  /// Most requests one session may have in flight; more are refused with an error.
  std::size_t max_in_flight_per_session = 64;
};

struct SessionOptions {
  /// Handshake-era clients must initialize first. Stateless transports turn this off and serve
  /// every request as if the handshake had happened with `assumed_version`.
  bool require_initialize = true;
  std::string assumed_version = "2025-11-25";
};

class Server : public std::enable_shared_from_this<Server> {
 public:
  /// `executor` runs tool handlers and other slow work; it must outlive the server's sessions.
  static std::shared_ptr<Server> create(ServerOptions options, util::Executor executor);
  ~Server();

  const ServerOptions& options() const { return options_; }

  /// Adds or replaces a tool. Throws std::invalid_argument for an empty name, a missing handler
  /// or an input schema the validator cannot compile. The add_ and remove_ functions tell ready
  /// sessions `notifications/<list>/list_changed` only when the list changed: replacing an item
  /// with the same definition (a new handler) is silent. Calls in flight keep the item they began
  /// with.
  void add_tool(Tool tool);
  bool remove_tool(const std::string& name);
  void add_resource(Resource resource);
  void add_resource_template(ResourceTemplate resource_template);
  void add_prompt(Prompt prompt);
  bool remove_prompt(const std::string& name);
  /// Names of the registered prompts, in registration order.
  std::vector<std::string> prompt_names() const;
  void set_completion_handler(CompletionHandler handler);

  /// Sends notifications/resources/updated to sessions subscribed to `uri`.
  void notify_resource_updated(const std::string& uri);

  /// Capabilities advertised at initialize and server/discover.
  json::object capabilities(std::string_view protocol_version) const;
  json::object server_info() const;
  std::size_t tool_count() const;
  /// Sessions currently alive.
  std::size_t session_count() const;

  /// A new session (one client connection). Keep the pointer for as long as the client lives.
  std::shared_ptr<Session> create_session(SessionOptions options = {});

 private:
  friend class Session;
  Server(ServerOptions options, util::Executor executor);
  void broadcast(std::string_view method);

  ServerOptions options_;
  util::Executor executor_;
  std::unique_ptr<Registry> registry_;
};

}  // namespace mcpclass::server
