// The client side of stdio: spawns an MCP server process and talks newline-delimited JSON-RPC on
// its stdin/stdout; its stderr lines are reported as logs, its exit is detected and reported.
// The child runs in its own process group; close() ends it (stdin EOF, then SIGTERM, then
// SIGKILL to the group) and reaps it, so no process or descriptor outlives the transport.
// Thread-safety: as ClientTransport; pid() and exit_status() may be called from any thread.
#pragma once

#include "mcpclass/client/transport.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::transport::client {

struct StdioClientOptions {
  /// argv; argv[0] is looked up in PATH. Must not be empty.
  std::vector<std::string> command;
  /// Set (or overridden) in the child's environment; values are used verbatim.
  std::map<std::string, std::string> env;
  /// Start from the parent's environment (else only `env`).
  bool inherit_env = true;
  /// Empty: the parent's working directory.
  std::string working_directory;
  /// After closing stdin, how long the server may take to exit before SIGTERM (and as long
  /// again before SIGKILL).
  std::chrono::milliseconds shutdown_grace{2'000};
  /// Longest accepted stdout line; longer ones are dropped and reported.
  std::size_t max_line_bytes = 16 * 1024 * 1024;
};

class StdioClientTransport : public mcpclass::client::ClientTransport {
 public:
  explicit StdioClientTransport(StdioClientOptions options);
  /// Calls close().
  ~StdioClientTransport() override;

  /// Spawns the process. Throws mcpclass::client::TransportError when it cannot be started
  /// (including a program that is not found). May be called again after close() to restart the
  /// server.
  void start(mcpclass::client::TransportHandlers handlers) override;
  void send(const boost::json::value& message) override;
  void close() override;
  bool is_open() const override;
  std::string describe() const override;

  /// The child's pid while it runs, else -1.
  int pid() const;
  /// The exit status (or 128 + signal) once the child ended.
  std::optional<int> exit_status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Splits a command line like a POSIX shell would split words: whitespace separates, single and
/// double quotes group, backslash escapes. No expansion of any kind.
std::vector<std::string> split_command_line(std::string_view line);

}  // namespace mcpclass::transport::client
