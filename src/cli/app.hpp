// What the subcommands of the `mcpclass` command line share.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/config/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mcpclass::cli {

/// Documented exit codes.
enum ExitCode : int {
  kOk = 0,
  kRuntimeError = 1,  ///< classification or serving failed
  kUsageError = 2,    ///< bad command line or configuration
};

/// The embedded default when `path` is empty, else the file. Throws config::ConfigError.
config::Config load_config(const std::string& path);

struct ServeOptions {
  std::string config_path;
  bool stdio = false;
  std::string http;  ///< HOST:PORT; empty = no HTTP
  bool stateless = false;
  std::string tls_cert;  ///< --tls-cert: overrides server.http.tls.cert_file
  std::string tls_key;   ///< --tls-key: overrides server.http.tls.key_file
  /// Added to / overriding server.http.auth.
  std::vector<std::string> allow_hosts;
  std::vector<std::string> allow_origins;
  std::string token_file;
  bool allow_unauthenticated = false;
  /// `mcpclass route`: HTTP only, with the routing proxy of the config's `route` section.
  bool route = false;
};

int run_classify(const config::Config& config, const std::string& text, bool probabilities);
int run_list(const config::Config& config);
/// Prints the effective configuration (defaults filled in) as one JSON document.
int run_config(const config::Config& config);
int run_serve(const config::Config& config, const ServeOptions& options);
/// Makes large blocks go back to the system when freed (glibc); called once by `serve`.
void bound_heap_retention();

// --- remote.cpp: the MCP client (classify --remote/--remote-cmd, call) ---
struct RemoteCliOptions {
  std::string url;      ///< --remote
  std::string command;  ///< --remote-cmd
  std::string transport = "auto";
  std::string protocol;  ///< --protocol: client::choose_protocol; empty = the newest handshake
  std::string tool;
  double timeout_seconds = 10;
  int max_retries = 2;
  std::vector<std::string> headers;
  std::string ca_file;  ///< --ca-file: trust these CAs for https:// URLs
  /// --oauth-*: classifier.remote.auth from the command line; any of them turns OAuth on.
  std::string oauth_grant, oauth_client_id, oauth_client_secret, oauth_scope, oauth_private_key;
  bool active() const { return !url.empty() || !command.empty(); }
};
struct CallCliOptions {
  std::string target;
  std::string tool;
  std::vector<std::string> arguments;
  bool is_command = false;
  bool list_tools = false;
  bool list_resources = false;
  std::string read_uri;
  std::string prompt;
  bool verbose = false;
  RemoteCliOptions remote;
};
void add_remote_options(CLI::App& classify, RemoteCliOptions& options);
CLI::App* add_call_command(CLI::App& app, CallCliOptions& options);
int run_remote_classify(const RemoteCliOptions& options, const std::string& text,
                        bool probabilities);
int run_call(const CallCliOptions& options);

}  // namespace mcpclass::cli
