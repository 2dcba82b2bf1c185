// Resources, resource templates and prompts.
#pragma once

#include "mcpclass/server/request_context.hpp"

#include <boost/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::server {

/// Reads a resource: returns the `contents` array of resources/read.
using ResourceReader = std::function<json::array(const std::string& uri, RequestContext& ctx)>;

struct Resource {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  ResourceReader read;

  json::object definition() const;
};

/// A family of resources named by an RFC 6570 level-1 template such as `test://items/{id}/data`.
struct ResourceTemplate {
  std::string uri_template;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  /// Reads one instance; `variables` holds the values the URI gave the template's variables.
  std::function<json::array(const std::string& uri,
                            const std::map<std::string, std::string>& variables,
                            RequestContext& ctx)>
      read;

  json::object definition() const;
};

/// Matches a URI against a level-1 template; a variable matches one or more characters other
/// than '/'. Returns the variables, or nullopt.
std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view uri_template,
                                                                     std::string_view uri);

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct Prompt {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  /// Returns the prompts/get result ({description?, messages}); required arguments are present.
  std::function<json::object(const std::map<std::string, std::string>& arguments,
                             RequestContext& ctx)>
      get;

  json::object definition() const;
};

/// Answers completion/complete: given `ref`, `argument` and `context`, returns the values.
using CompletionHandler = std::function<std::vector<std::string>(
    const json::object& ref, const json::object& argument, const json::object& context)>;

}  // namespace mcpclass::server
