#include "mcpclass/server/server.hpp"

#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "server/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace mcpclass::server {

namespace {

template <typename T, typename Key>
std::shared_ptr<const T> find_by(const std::vector<std::shared_ptr<const T>>& items, const Key& key,
                                 std::string T::*member) {
  for (const auto& item : items) {
    if (item.get()->*member == key) return item;
  }
  return nullptr;
}

// Replaces an item with the same key or appends; keeps registration order stable. Returns whether
// the list a client sees changed (a new item, or a different definition).
template <typename T>
bool upsert(std::vector<std::shared_ptr<const T>>& items, std::shared_ptr<const T> item,
            std::string T::*member) {
  for (auto& existing : items) {
    if (existing.get()->*member == item.get()->*member) {
      const bool changed = existing->definition() != item->definition();
      existing = std::move(item);
      return changed;
    }
  }
  items.push_back(std::move(item));
  return true;
}

}  // namespace

std::shared_ptr<const RegisteredTool> Registry::find_tool(const std::string& name) const {
  for (const auto& t : tools) {
    if (t->tool.name == name) return t;
  }
  return nullptr;
}

std::shared_ptr<const Prompt> Registry::find_prompt(const std::string& name) const {
  return find_by(prompts, name, &Prompt::name);
}

std::shared_ptr<const Resource> Registry::find_resource(const std::string& uri) const {
  return find_by(resources, uri, &Resource::uri);
}

std::shared_ptr<const ResourceTemplate> Registry::find_template(
    const std::string& uri, std::map<std::string, std::string>& variables) const {
  for (const auto& t : templates) {
    if (auto vars = match_uri_template(t->uri_template, uri)) {
      variables = std::move(*vars);
      return t;
    }
  }
  return nullptr;
}

std::vector<std::shared_ptr<Session>> Registry::live_sessions() {
  std::vector<std::shared_ptr<Session>> live;
  std::lock_guard lock(sessions_mutex);
  std::erase_if(sessions, [&](const std::weak_ptr<Session>& w) {
    auto s = w.lock();
    if (!s) return true;
    live.push_back(std::move(s));
    return false;
  });
  return live;
}

void Registry::add_session(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(sessions_mutex);
  if (sessions.size() >= prune_at) {
    std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
    prune_at = std::max<std::size_t>(64, sessions.size() * 2);
  }
  sessions.push_back(session);
}

std::shared_ptr<Server> Server::create(ServerOptions options, util::Executor executor) {
  return std::shared_ptr<Server>(new Server(std::move(options), std::move(executor)));
}

Server::Server(ServerOptions options, util::Executor executor)
    : options_(std::move(options)),
      executor_(std::move(executor)),
      registry_(std::make_unique<Registry>()) {
  if (!executor_) throw std::invalid_argument("Server needs an executor");
}

Server::~Server() = default;

void Server::add_tool(Tool tool) {
  if (tool.name.empty()) throw std::invalid_argument("tool name must not be empty");
  if (!tool.handler) throw std::invalid_argument("tool '" + tool.name + "' has no handler");
  auto reg = std::make_shared<RegisteredTool>();
  try {
    reg->validator = std::make_shared<const SchemaValidator>(tool.input_schema);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("tool '" + tool.name + "': " + e.what());
  }
  reg->tool = std::move(tool);
  bool changed = true;
  {
    std::unique_lock lock(registry_->mutex);
    bool replaced = false;
    for (auto& existing : registry_->tools) {
      if (existing->tool.name == reg->tool.name) {
        changed = existing->tool.definition() != reg->tool.definition();
        existing = reg;
        replaced = true;
      }
    }
    if (!replaced) registry_->tools.push_back(std::move(reg));
  }
  if (changed) broadcast("notifications/tools/list_changed");
}

bool Server::remove_tool(const std::string& name) {
  bool removed;
  {
    std::unique_lock lock(registry_->mutex);
    removed = std::erase_if(registry_->tools, [&](const auto& t) { return t->tool.name == name; });
  }
  if (removed) broadcast("notifications/tools/list_changed");
  return removed;
}

void Server::add_resource(Resource resource) {
  if (resource.uri.empty() || !resource.read) {
    throw std::invalid_argument("a resource needs a uri and a reader");
  }
  bool changed;
  {
    std::unique_lock lock(registry_->mutex);
    changed = upsert(registry_->resources, std::make_shared<const Resource>(std::move(resource)),
                     &Resource::uri);
  }
  if (changed) broadcast("notifications/resources/list_changed");
}

void Server::add_resource_template(ResourceTemplate t) {
  if (t.uri_template.empty() || !t.read) {
    throw std::invalid_argument("a resource template needs a uriTemplate and a reader");
  }
  bool changed;
  {
    std::unique_lock lock(registry_->mutex);
    changed = upsert(registry_->templates, std::make_shared<const ResourceTemplate>(std::move(t)),
                     &ResourceTemplate::uri_template);
  }
  if (changed) broadcast("notifications/resources/list_changed");
}

void Server::add_prompt(Prompt prompt) {
  if (prompt.name.empty() || !prompt.get) {
    throw std::invalid_argument("a prompt needs a name and a getter");
  }
  bool changed;
  {
    std::unique_lock lock(registry_->mutex);
    changed = upsert(registry_->prompts, std::make_shared<const Prompt>(std::move(prompt)),
                     &Prompt::name);
  }
  if (changed) broadcast("notifications/prompts/list_changed");
}

bool Server::remove_prompt(const std::string& name) {
  bool removed;
  {
    std::unique_lock lock(registry_->mutex);
    removed = std::erase_if(registry_->prompts, [&](const auto& p) { return p->name == name; });
  }
  if (removed) broadcast("notifications/prompts/list_changed");
  return removed;
}

std::vector<std::string> Server::prompt_names() const {
  std::shared_lock lock(registry_->mutex);
  std::vector<std::string> names;
  for (const auto& p : registry_->prompts) names.push_back(p->name);
  return names;
}

void Server::set_completion_handler(CompletionHandler handler) {
  std::unique_lock lock(registry_->mutex);
  registry_->completion = std::move(handler);
}

void Server::notify_resource_updated(const std::string& uri) {
  for (const auto& s : registry_->live_sessions()) {
    if (s->subscribed(uri)) {
      s->send_standalone(jsonrpc::make_notification("notifications/resources/updated",
                                                    json::object{{"uri", uri}}));
    }
  }
}

void Server::broadcast(std::string_view method) {
  for (const auto& s : registry_->live_sessions()) {
    if (s->state() == Session::State::ready) {
      s->send_standalone(jsonrpc::make_notification(method, nullptr));
    }
  }
}

json::object Server::capabilities(std::string_view version) const {
  // The stateless revision removed logging/setLevel and resources/subscribe.
  const bool stateless = protocol::at_least(version, protocol::k2026_07_28);
  json::object resources{{"listChanged", true}};
  if (!stateless) resources["subscribe"] = true;
  json::object caps{
      {"tools", json::object{{"listChanged", true}}},
      {"resources", std::move(resources)},
      {"prompts", json::object{{"listChanged", true}}},
  };
  if (!stateless) caps["logging"] = json::object{};
  // completion/complete arrived with 2025-03-26.
  if (protocol::at_least(version, protocol::k2025_03_26)) caps["completions"] = json::object{};
  return caps;
}

json::object Server::server_info() const {
  json::object info{{"name", options_.name}, {"version", options_.version}};
  if (!options_.title.empty()) info["title"] = options_.title;
  return info;
}

std::size_t Server::tool_count() const {
  std::shared_lock lock(registry_->mutex);
  return registry_->tools.size();
}

std::size_t Server::session_count() const {
  return registry_->live_sessions().size();
}

std::shared_ptr<Session> Server::create_session(SessionOptions options) {
  auto session = std::shared_ptr<Session>(new Session(shared_from_this(), std::move(options)));
  registry_->add_session(session);
  return session;
}

}  // namespace mcpclass::server
