// classify --remote/--remote-cmd and call: the CLI face of the MCP client.
#include "cli/app.hpp"
#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "mcpclass/transport/client/stdio.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include <cstdio>

namespace mcpclass::cli {

namespace json = boost::json;

namespace {

/// "Name: value" → {Name, value}.
std::map<std::string, std::string> parse_headers(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> out;
  for (const auto& line : lines) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      throw CLI::ValidationError("--header", "expected 'Name: value', got '" + line + "'");
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    out[line.substr(0, colon)] = value;
  }
  return out;
}

/// key=value; the value is JSON when it parses as JSON, else a string.
json::object parse_arguments(const std::vector<std::string>& pairs) {
  json::object args;
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CLI::ValidationError("arguments", "expected key=value, got '" + pair + "'");
    const std::string value = pair.substr(eq + 1);
    boost::system::error_code ec;
    json::value v = json::parse(value, ec);
    args[pair.substr(0, eq)] = ec ? json::value(value) : std::move(v);
  }
  return args;
}

// --protocol is checked while parsing, so a typo is a usage error (exit 2) naming the values.
CLI::Validator protocol_check() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          client::ClientOptions probe;
          client::choose_protocol(probe, value);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "PROTOCOL");
}

// What --remote/--remote-cmd and `call` share.
remote::RemoteClassifierOptions remote_options(const RemoteCliOptions& o) {
  remote::RemoteClassifierOptions ro;
  ro.transport = o.transport;
  ro.url = o.url;
  ro.protocol = o.protocol;
  if (!o.command.empty()) ro.command = transport::client::split_command_line(o.command);
  ro.headers = parse_headers(o.headers);
  ro.ca_file = o.ca_file;
  ro.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_seconds * 1000));
  // Through the config reader, so the flags are validated exactly like classifier.remote.auth.
  json::object auth;
  for (const auto& [key, value] : {std::pair{"grant", &o.oauth_grant},
                                   {"client_id", &o.oauth_client_id},
                                   {"client_secret", &o.oauth_client_secret},
                                   {"scope", &o.oauth_scope},
                                   {"private_key_file", &o.oauth_private_key}})
    if (!value->empty()) auth[key] = *value;
  if (auth.empty()) return ro;
  try {
    ro.auth = remote::RemoteAuthOptions::from_json(auth, "oauth");
  } catch (const classify::ConfigError& e) {
    static const std::map<std::string, std::string> flags = {
        {"oauth.grant", "--oauth-grant"},
        {"oauth.client_id", "--oauth-client-id"},
        {"oauth.client_secret", "--oauth-client-secret"},
        {"oauth.scope", "--oauth-scope"},
        {"oauth.private_key_file", "--oauth-private-key"}};
    const auto it = flags.find(e.path());
    std::string message = e.what();
    if (message.starts_with(e.path() + ": ")) message.erase(0, e.path().size() + 2);
    throw CLI::ValidationError(it == flags.end() ? "--oauth" : it->second, message);
  }
  return ro;
}

void add_oauth_options(CLI::App& app, RemoteCliOptions& o) {
  app.add_option("--oauth-grant", o.oauth_grant,
                 "OAuth 2.1 grant: client_credentials (default once any --oauth-* is given) or "
                 "authorization_code (headless)");
  app.add_option("--oauth-client-id", o.oauth_client_id,
                 "OAuth client id (default: dynamic client registration)");
  app.add_option("--oauth-client-secret", o.oauth_client_secret,
                 "OAuth client secret; ${ENV} is expanded, so '${MY_SECRET}' keeps it out of ps");
  app.add_option("--oauth-scope", o.oauth_scope, "OAuth scope to request");
  app.add_option("--oauth-private-key", o.oauth_private_key,
                 "PEM private key for private_key_jwt client authentication");
}

void add_ca_file_option(CLI::App& app, std::string& ca_file) {
  app.add_option("--ca-file", ca_file,
                 "PEM file of CAs to trust for https:// URLs (default: the system trust store)");
}

void print_log(std::string_view line) {
  fmt::print(stderr, "mcpclass: {}\n", line);
}

}  // namespace

void add_remote_options(CLI::App& classify, RemoteCliOptions& o) {
  classify.add_option("--remote", o.url, "Classify with a remote MCP server at this URL");
  classify.add_option("--remote-cmd", o.command,
                      "Classify with a stdio MCP server started by this command line");
  classify.add_option("--transport", o.transport,
                      "auto | streamable-http | sse | rest | stdio (default auto)");
  classify.add_option("--tool", o.tool, "Classification tool (default: auto-discovery)");
  classify.add_option("--timeout", o.timeout_seconds, "Per-request timeout, seconds (default 10)");
  classify
      .add_option("--protocol", o.protocol,
                  "MCP revision for --remote: 2026-07-28, a handshake revision, or auto")
      ->check(protocol_check());
  classify.add_option("-H,--header", o.headers,
                      "Extra HTTP header 'Name: value' (${ENV} expanded)");
  classify.add_option("--retries", o.max_retries, "Retries after transport failures (default 2)");
  add_ca_file_option(classify, o.ca_file);
  add_oauth_options(classify, o);
}

CLI::App* add_call_command(CLI::App& app, CallCliOptions& o) {
  auto* call = app.add_subcommand("call", "Call a tool (or list, read, get) on any MCP server");
  call->add_option("target", o.target,
                   "Server URL, or with --cmd the command line of a stdio server")
      ->required();
  call->add_option("tool", o.tool, "Tool to call");
  call->add_option("arguments", o.arguments,
                   "key=value arguments (values parsed as JSON when valid)");
  call->add_flag("--cmd", o.is_command, "TARGET is a command line (stdio server)");
  call->add_option("--transport", o.remote.transport,
                   "auto | streamable-http | sse | rest | stdio (default auto)");
  call->add_option("--timeout", o.remote.timeout_seconds, "Per-request timeout, seconds");
  call->add_option("--protocol", o.remote.protocol,
                   "MCP revision: 2026-07-28 (stateless), a handshake revision (default "
                   "2025-11-25), or auto")
      ->check(protocol_check());
  call->add_option("-H,--header", o.remote.headers, "Extra HTTP header 'Name: value'");
  add_ca_file_option(*call, o.remote.ca_file);
  add_oauth_options(*call, o.remote);
  call->add_flag("--list-tools", o.list_tools, "Print tools/list");
  call->add_flag("--list-resources", o.list_resources, "Print resources/list");
  call->add_option("--read", o.read_uri, "Print resources/read of this URI");
  call->add_option("--prompt", o.prompt,
                   "Print prompts/get of this prompt (arguments as key=value)");
  call->add_flag("-v,--verbose", o.verbose, "Print server logs and transport diagnostics");
  return call;
}

int run_remote_classify(const RemoteCliOptions& o, const std::string& text, bool probabilities) {
  try {
    remote::RemoteClassifierOptions ro = remote_options(o);
    ro.tool = o.tool;
    ro.max_retries = o.max_retries;
    const remote::RemoteClassifier classifier(ro);
    const classify::Classification c = classifier.classify(text, {probabilities});
    json::object out = classify::to_wire(c, probabilities);
    out["category"] = c.category;
    fmt::print("{}\n", json::serialize(out));
    return kOk;
  } catch (const remote::RemoteError& e) {
    fmt::print(stderr, "mcpclass: remote classification failed ({}): {}\n",
               remote::to_string(e.failure()), e.what());
    return kRuntimeError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return kUsageError;
  }
}

int run_call(const CallCliOptions& o) {
  RemoteCliOptions remote = o.remote;
  (o.is_command ? remote.command : remote.url) = o.target;
  std::shared_ptr<client::ClientTransport> transport;
  try {
    transport = remote::make_remote_transport(remote_options(remote));
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return kUsageError;
  }
  client::ClientOptions co;
  co.request_timeout =
      std::chrono::milliseconds(static_cast<long long>(remote.timeout_seconds * 1000));
  if (!remote.protocol.empty()) client::choose_protocol(co, remote.protocol);
  if (o.verbose) {
    co.callbacks.on_log = print_log;
    co.callbacks.on_log_message = [](const json::object& p) { print_log(json::serialize(p)); };
  }
  client::Client client(transport, co);
  try {
    const json::object args = parse_arguments(o.arguments);
    client.connect();
    json::value out;
    bool failed = false;
    if (o.list_tools) {
      out = json::object{{"tools", client.list_tools()}};
    } else if (o.list_resources) {
      out = json::object{{"resources", client.list_resources()}};
    } else if (!o.read_uri.empty()) {
      out = client.read_resource(o.read_uri);
    } else if (!o.prompt.empty()) {
      out = client.get_prompt(o.prompt, args);
    } else if (!o.tool.empty()) {
      json::object result = client.call_tool(o.tool, args);
      const auto* is_error = result.if_contains("isError");
      failed = is_error != nullptr && is_error->is_bool() && is_error->get_bool();
      out = std::move(result);
    } else {
      out = json::object{{"server", client.server().server_info},
                         {"protocolVersion", client.server().protocol_version},
                         {"capabilities", client.server().capabilities}};
    }
    client.close();
    fmt::print("{}\n", json::serialize(out));
    return failed ? kRuntimeError : kOk;
  } catch (const CLI::ValidationError& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return kRuntimeError;
  }
}

}  // namespace mcpclass::cli
