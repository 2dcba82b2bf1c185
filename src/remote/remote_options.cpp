// Configuration of the remote classifier, tool discovery and the transport choice.
#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "mcpclass/transport/client/stdio.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace mcpclass::remote {

std::string_view to_string(RemoteFailure failure) {
  switch (failure) {
    case RemoteFailure::unreachable:
      return "unreachable";
    case RemoteFailure::timeout:
      return "timeout";
    case RemoteFailure::protocol:
      return "protocol_error";
    case RemoteFailure::invalid_result:
      return "invalid_result";
    case RemoteFailure::circuit_open:
      return "circuit_open";
    case RemoteFailure::untrusted:
      return "untrusted";
  }
  return "unknown";
}

namespace {

std::map<std::string, std::string> string_map(util::strict::ObjectReader& r, std::string_view key) {
  std::map<std::string, std::string> out;
  if (const auto* v = r.get(key)) {
    const auto path = r.path_of(key);
    for (const auto& [k, value] : util::strict::as_object(*v, path))
      out[std::string(k)] = util::strict::as_string(value, util::strict::member_path(path, k));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The keys of an MCP remote that mean nothing to an http_classify server.
void check_http_classify(const json::object& section, util::strict::ObjectReader& r) {
  for (const char* key : {"command", "env", "auth", "tool", "categories_tool", "cache_categories",
                          "refresh_interval", "num_categories"})
    if (section.contains(key))
      util::strict::fail(r.path_of(key), "does not apply to protocol http_classify");
  if (const auto* t = section.if_contains("transport");
      t && !(t->is_string() && t->get_string() == "auto"))
    util::strict::fail(r.path_of("transport"),
                       "does not apply to protocol http_classify (it is plain HTTP)");
  if (!section.contains("url"))
    util::strict::fail(r.path_of("url"),
                       "required for protocol http_classify (the base: POST <url>/classify)");
}

}  // namespace

RemoteClassifierOptions RemoteClassifierOptions::from_json(const json::value& v,
                                                           const std::string& path) {
  util::strict::ObjectReader r(v, path);
  RemoteClassifierOptions o;
  o.transport = r.string("transport").value_or(o.transport);
  static constexpr std::array kTransports = {"auto", "streamable-http", "sse", "rest", "stdio"};
  if (std::find(kTransports.begin(), kTransports.end(), o.transport) == kTransports.end())
    util::strict::fail(r.path_of("transport"),
                       "must be one of auto, streamable-http, sse, rest, stdio");
  o.url = r.string("url").value_or("");
  o.protocol = r.string("protocol").value_or("");
  if (!o.protocol.empty() && !o.http_classify()) {
    try {
      client::ClientOptions probe;
      client::choose_protocol(probe, o.protocol);
    } catch (const std::invalid_argument& e) {
      util::strict::fail(r.path_of("protocol"), e.what());
    }
  }
  if (const auto* c = r.get("command")) {
    if (c->is_string()) {
      try {
        o.command = transport::client::split_command_line(c->get_string());
      } catch (const std::exception& e) {
        util::strict::fail(r.path_of("command"), e.what());
      }
    } else {
      o.command = util::strict::as_string_list(*c, r.path_of("command"));
    }
  }
  o.env = string_map(r, "env");
  o.headers = string_map(r, "headers");
  o.ca_file = r.string("ca_file").value_or("");
  if (const auto* a = r.get("auth")) o.auth = RemoteAuthOptions::from_json(*a, r.path_of("auth"));
  o.tool = r.string("tool").value_or("");
  o.categories_tool = r.string("categories_tool").value_or(o.categories_tool);
  o.timeout = r.seconds("timeout", false).value_or(o.timeout);
  if (const auto n = r.integer("max_retries")) {
    if (*n < 0 || *n > 10) util::strict::fail(r.path_of("max_retries"), "must be within [0, 10]");
    o.max_retries = static_cast<int>(*n);
  }
  o.retry_backoff = r.seconds("retry_backoff", true).value_or(o.retry_backoff);
  o.cache_categories = r.boolean("cache_categories").value_or(o.cache_categories);
  o.refresh_interval = r.seconds("refresh_interval", false).value_or(o.refresh_interval);
  if (const auto n = r.integer("num_categories")) {
    if (*n <= 0) util::strict::fail(r.path_of("num_categories"), "must be a positive integer");
    o.num_categories = static_cast<std::size_t>(*n);
  }
  if (const auto t = r.number("confidence_threshold")) {
    if (!(*t >= 0 && *t <= 1))
      util::strict::fail(r.path_of("confidence_threshold"), "must be within [0, 1]");
    o.confidence_threshold = *t;
  }
  o.fallback_category = r.string("fallback_category").value_or(o.fallback_category);
  o.access_key = r.string("access_key").value_or("");
  o.labels = string_map(r, "labels");
  if (const auto* b = r.get("circuit_breaker")) {
    util::strict::ObjectReader br(*b, r.path_of("circuit_breaker"));
    if (const auto n = br.integer("failures")) {
      if (*n <= 0) util::strict::fail(br.path_of("failures"), "must be a positive integer");
      o.breaker_failures = static_cast<int>(*n);
    }
    o.breaker_open = br.seconds("open_seconds", false).value_or(o.breaker_open);
    br.finish();
  }
  r.finish();
  if (o.http_classify()) {
    check_http_classify(v.as_object(), r);
    return o;
  }
  for (const char* key : {"access_key", "labels"})
    if (v.as_object().contains(key))
      util::strict::fail(r.path_of(key),
                         "applies to protocol http_classify only (MCP servers "
                         "take headers or auth)");
  const bool stdio = o.transport == "stdio" || (o.transport == "auto" && !o.command.empty());
  if (stdio && o.command.empty()) util::strict::fail(r.path_of("command"), "required for stdio");
  if (!stdio && o.url.empty()) util::strict::fail(r.path_of("url"), "required (or set command)");
  if (o.auth && (stdio || o.transport == "sse" ||
                 (o.transport == "auto" && (o.url.ends_with("/sse") || o.url.ends_with("/sse/")))))
    util::strict::fail(r.path_of("auth"),
                       "OAuth applies to the streamable-http and rest transports only");
  return o;
}

json::object RemoteClassifierOptions::to_json() const {
  json::object o{{"transport", transport}};
  if (!url.empty()) o["url"] = url;
  if (!command.empty()) {
    json::array argv;
    for (const auto& a : command) argv.emplace_back(a);
    o["command"] = std::move(argv);
  }
  auto map_json = [](const std::map<std::string, std::string>& m) {
    json::object out;
    for (const auto& [k, v] : m) out[k] = v;
    return out;
  };
  if (!env.empty()) o["env"] = map_json(env);
  if (!headers.empty()) o["headers"] = map_json(headers);  // unexpanded: no secrets
  if (!ca_file.empty()) o["ca_file"] = ca_file;
  if (auth) o["auth"] = auth->to_json();
  if (!tool.empty()) o["tool"] = tool;
  if (!protocol.empty()) o["protocol"] = protocol;
  if (!access_key.empty())  // a literal key stays out; a ${NAME} reference is no secret
    o["access_key"] = access_key.find("${") != std::string::npos ? access_key : "***";
  if (!labels.empty()) o["labels"] = map_json(labels);
  o["categories_tool"] = categories_tool;
  o["timeout"] = static_cast<double>(timeout.count()) / 1000;
  o["max_retries"] = max_retries;
  o["retry_backoff"] = static_cast<double>(retry_backoff.count()) / 1000;
  o["cache_categories"] = cache_categories;
  o["refresh_interval"] = static_cast<double>(refresh_interval.count()) / 1000;
  if (num_categories) o["num_categories"] = *num_categories;
  o["confidence_threshold"] = confidence_threshold;
  o["fallback_category"] = fallback_category;
  o["circuit_breaker"] =
      json::object{{"failures", breaker_failures},
                   {"open_seconds", static_cast<double>(breaker_open.count()) / 1000}};
  return o;
}

std::string discover_classification_tool(const json::array& tools, std::string_view configured) {
  std::vector<std::pair<std::string, std::string>> named;  // name, description
  for (const auto& t : tools) {
    if (!t.is_object()) continue;
    const auto* n = t.get_object().if_contains("name");
    const auto* d = t.get_object().if_contains("description");
    if (n == nullptr || !n->is_string()) continue;
    named.emplace_back(std::string(n->get_string()),
                       d != nullptr && d->is_string() ? std::string(d->get_string()) : "");
  }
  auto has = [&](std::string_view name) {
    return std::any_of(named.begin(), named.end(), [&](const auto& t) { return t.first == name; });
  };
  auto listing = [&] {
    std::string out;
    for (const auto& t : named) out += (out.empty() ? "" : ", ") + t.first;
    return out.empty() ? std::string("none") : out;
  };
  if (!configured.empty()) {
    if (has(configured)) return std::string(configured);
    throw RemoteProtocolError(
        fmt::format("the server has no tool '{}' (tools: {})", configured, listing()));
  }
  for (const char* candidate : {"classify_text", "classify", "categorize", "categorize_text"})
    if (has(candidate)) return candidate;
  for (const auto& [name, description] : named)
    if (lower(name).find("classif") != std::string::npos ||
        lower(description).find("classif") != std::string::npos)
      return name;
  throw RemoteProtocolError(
      fmt::format("the server has no classification tool (tools: {})", listing()));
}

std::shared_ptr<client::ClientTransport> make_remote_transport(
    const RemoteClassifierOptions& options) {
  std::string kind = options.transport;
  if (kind == "auto")
    kind = !options.command.empty()                                          ? "stdio"
           : options.url.ends_with("/sse") || options.url.ends_with("/sse/") ? "sse"
                                                                             : "streamable-http";
  if (kind == "stdio") {
    if (options.command.empty())
      throw classify::ConfigError("command", "required for the stdio transport");
    transport::client::StdioClientOptions so;
    so.command = options.command;
    so.env = options.env;
    return std::make_shared<transport::client::StdioClientTransport>(std::move(so));
  }
  if (options.url.empty()) throw classify::ConfigError("url", "required for HTTP transports");
  transport::client::HttpClientOptions ho;
  ho.url = options.url;
  ho.headers = options.headers;
  ho.ca_file = options.ca_file;
  ho.connect_timeout = options.timeout;
  ho.io_timeout = options.timeout;
  if (options.auth) {
    if (kind == "sse")
      throw classify::ConfigError("auth",
                                  "OAuth applies to the streamable-http and rest transports only");
    ho.oauth = options.auth->to_oauth(options.timeout);
  }
  if (kind == "sse") return transport::client::make_legacy_sse_transport(std::move(ho));
  if (kind == "rest") return transport::client::make_rest_transport(std::move(ho));
  return transport::client::make_streamable_http_transport(std::move(ho));
}

}  // namespace mcpclass::remote
