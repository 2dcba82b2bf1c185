// mcpclass: classify text, list categories, serve the classifier over MCP.
#include "cli/app.hpp"
#include "cli/detect_command.hpp"
#include "cli/learned_commands.hpp"
#include "cli/rerank_command.hpp"
#include "cli/tokenize_command.hpp"
#include "cli/verbatim_args.hpp"
#include "mcpclass/version.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>

using namespace mcpclass;

int main(int argc, char** argv) {
  CLI::App app{
      "mcpclass: LLM query classification over the Model Context Protocol.\n"
      "Exit codes: 0 success, 1 classification or serving failed, 2 bad usage or "
      "configuration."};
  app.set_version_flag("--version", std::string("mcpclass ") + kVersion);
  app.require_subcommand(1);

  std::string config_path;
  auto add_config = [&](CLI::App* sub) {
    sub->add_option("-c,--config", config_path,
                    "Configuration document (YAML or JSON); default: the embedded one")
        ->check(CLI::ExistingFile);
  };

  std::string text;
  bool probabilities = false;
  auto* classify = app.add_subcommand("classify", "Classify a text and print the result as JSON");
  classify->add_option("text", text, "The text to classify")->required();
  classify->add_flag("-p,--probabilities", probabilities,
                     "Include the probability distribution and its entropy");
  add_config(classify);
  cli::RemoteCliOptions remote;
  cli::add_remote_options(*classify, remote);
  cli::CallCliOptions call_options;
  auto* call = cli::add_call_command(app, call_options);

  auto* list = app.add_subcommand("list", "Print the categories as JSON (list_categories)");
  add_config(list);

  auto* config_dump = app.add_subcommand(
      "config", "Print the effective configuration (defaults filled in) as JSON");
  add_config(config_dump);

  cli::ServeOptions serve_options;
  // serve and route share the HTTP front and its options (only one of them runs).
  auto add_http_options = [&](CLI::App* cmd, const std::string& what) {
    cmd->add_option("--http", serve_options.http,
                    what + " on HOST:PORT (default" +
                        (cmd->get_name() == "serve" ? ", without --stdio" : "") +
                        ": server.http of the config, 127.0.0.1:8090)");
    auto* tls_cert = cmd->add_option("--tls-cert", serve_options.tls_cert,
                                     "Serve HTTPS only, with this PEM certificate chain "
                                     "(default: server.http.tls.cert_file of the config)");
    auto* tls_key = cmd->add_option("--tls-key", serve_options.tls_key,
                                    "PEM private key of --tls-cert (default: "
                                    "server.http.tls.key_file)");
    tls_cert->needs(tls_key);
    tls_key->needs(tls_cert);
    cmd->add_option("--allow-host", serve_options.allow_hosts,
                    "Also accept this Host header (repeatable; \"*\": any; added to "
                    "server.http.auth.allowed_hosts)");
    cmd->add_option("--allow-origin", serve_options.allow_origins,
                    "Also accept this Origin (repeatable; added to "
                    "server.http.auth.allowed_origins)");
    cmd->add_option("--token-file", serve_options.token_file,
                    "Require a bearer token listed in this file, one per line (overrides "
                    "server.http.auth.bearer_tokens_file)");
    cmd->add_flag("--allow-unauthenticated", serve_options.allow_unauthenticated,
                  "Serve a non-loopback address without tokens (behind a proxy that "
                  "authenticates)");
    add_config(cmd);
  };
  auto* serve = app.add_subcommand("serve", "Serve classify_text and list_categories over MCP");
  serve->add_flag("--stdio", serve_options.stdio,
                  "Serve newline-delimited JSON-RPC on stdin/stdout");
  add_http_options(serve,
                   "Serve Streamable HTTP (/mcp), legacy SSE (/sse), the router dialects and "
                   "/health");
  serve->add_flag("--stateless", serve_options.stateless,
                  "HTTP without sessions: every POST is self-contained");
  auto* route = app.add_subcommand(
      "route",
      "Route OpenAI chat completions (POST /v1/chat/completions) to the upstreams of the "
      "config's `route` section, next to everything `serve --http` serves (docs/route.md)");
  add_http_options(route, "Serve /v1/chat/completions, /v1/models, /mcp and /health");

  cli::LearnedCommands learned(app);  // model convert, index, train, eval
  cli::TokenizeOptions tokenize_options;
  auto* tokenize = cli::add_tokenize_command(app, tokenize_options);
  cli::DetectOptions detect_options;
  auto* detect = cli::add_detect_command(app, detect_options);
  cli::RerankOptions rerank_options;
  auto* rerank = cli::add_rerank_command(app, rerank_options);

  try {
    cli::parse_verbatim(app, argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? cli::kOk : cli::kUsageError;
  }

  if (*classify && remote.active()) return cli::run_remote_classify(remote, text, probabilities);
  if (*call) return cli::run_call(call_options);
  if (learned.selected()) return learned.run();
  if (*tokenize) return cli::run_tokenize(tokenize_options);
  if (*detect) return cli::run_detect(detect_options);
  if (*rerank) return cli::run_rerank(rerank_options);
  try {
    const config::Config config = cli::load_config(config_path);
    if (*classify) return cli::run_classify(config, text, probabilities);
    if (*list) return cli::run_list(config);
    if (*config_dump) return cli::run_config(config);
    serve_options.config_path = config_path;
    serve_options.route = static_cast<bool>(*route);
    return cli::run_serve(config, serve_options);
  } catch (const config::ConfigError& e) {
    fmt::print(stderr, "mcpclass: configuration error: {}\n", e.what());
    return cli::kUsageError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return cli::kRuntimeError;
  }
}
