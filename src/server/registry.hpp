// What a Server offers, guarded for concurrent readers and rare writers.
#pragma once

#include "mcpclass/server/resource.hpp"
#include "mcpclass/server/tool.hpp"
#include "server/schema_validator.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace mcpclass::server {

class Session;

struct RegisteredTool {
  Tool tool;
  std::shared_ptr<const SchemaValidator> validator;
};

struct Registry {
  mutable std::shared_mutex mutex;
  std::vector<std::shared_ptr<const RegisteredTool>> tools;  // in registration order
  std::vector<std::shared_ptr<const Resource>> resources;
  std::vector<std::shared_ptr<const ResourceTemplate>> templates;
  std::vector<std::shared_ptr<const Prompt>> prompts;
  CompletionHandler completion;

  std::mutex sessions_mutex;
  std::vector<std::weak_ptr<Session>> sessions;
  /// add_session() drops the expired entries when `sessions` reaches this size.
  std::size_t prune_at = 64;

  std::shared_ptr<const RegisteredTool> find_tool(const std::string& name) const;
  std::shared_ptr<const Prompt> find_prompt(const std::string& name) const;
  std::shared_ptr<const Resource> find_resource(const std::string& uri) const;
  /// The first template matching `uri`, with its variables.
  std::shared_ptr<const ResourceTemplate> find_template(
      const std::string& uri, std::map<std::string, std::string>& variables) const;
  /// Live sessions; drops the expired ones.
  std::vector<std::shared_ptr<Session>> live_sessions();
  /// Remembers a new session. Expired entries are dropped as the list grows (amortized O(1)), so
  /// a server that creates a session per request (stateless HTTP, router dialect) stays bounded.
  void add_session(const std::shared_ptr<Session>& session);
};

}  // namespace mcpclass::server
