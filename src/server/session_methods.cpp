// The registry-backed methods: tools, resources, prompts, completion.
#include "mcpclass/server/session.hpp"

#include "server/in_flight.hpp"
#include "server/registry.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace mcpclass::server {

using jsonrpc::kInvalidParams;
using jsonrpc::ProtocolError;

namespace {

const json::object& object_params(const json::value& params, std::string_view method) {
  static const json::object kEmpty;
  if (params.is_null()) return kEmpty;
  if (const auto* o = params.if_object()) return *o;
  throw ProtocolError(kInvalidParams,
                      fmt::format("Invalid params: {} takes named parameters", method));
}

std::string required_string(const json::object& p, std::string_view key, std::string_view method) {
  const auto* v = p.if_contains(key);
  if (!v || !v->is_string()) {
    throw ProtocolError(kInvalidParams,
                        fmt::format("Invalid params: {} needs \"{}\" (a string)", method, key));
  }
  return std::string(v->get_string());
}

// Cursors are opaque to clients; ours is the offset of the page's first item.
template <typename Item, typename Def>
json::object paginate(const std::vector<Item>& items, const json::value& params,
                      std::size_t page_size, std::string_view method, std::string_view key,
                      Def definition) {
  const json::object& p = object_params(params, method);
  std::size_t offset = 0;
  if (const auto* c = p.if_contains("cursor"); c && !c->is_null()) {
    const std::string_view s = c->is_string() ? std::string_view(c->get_string()) : "";
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), offset);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || offset >= items.size()) {
      throw ProtocolError(kInvalidParams,
                          fmt::format("Invalid params: unknown cursor for {}", method));
    }
  }
  const std::size_t stop = std::min(items.size(), offset + std::max<std::size_t>(page_size, 1));
  json::array page;
  for (std::size_t i = offset; i < stop; ++i) page.push_back(definition(items[i]));
  json::object result{{key, std::move(page)}};
  if (stop < items.size()) result["nextCursor"] = std::to_string(stop);
  return result;
}

}  // namespace

void Session::run_async(const std::shared_ptr<InFlight>& call, bool run_inline,
                        std::function<json::value(InFlight&)> work) {
  auto self = shared_from_this();
  auto job = [self, call, work = std::move(work)]() mutable {
    std::optional<json::value> result;
    std::optional<jsonrpc::Error> error;
    try {
      result = work(*call);
    } catch (const ProtocolError& e) {
      error = e.error();
    } catch (const std::exception& e) {
      error = jsonrpc::Error{jsonrpc::kInternalError, std::string("Internal error: ") + e.what()};
    }
    // The work and what it holds (a tool, a host's callback data) go before the answer does:
    // whoever has the answer knows nothing of the call is left (the C ABI promises a removed
    // tool's destroy callback runs once no call of it is left).
    work = nullptr;
    if (!call->cancelled()) {
      if (result) {
        self->finish(call, std::move(*result));
      } else {
        self->finish_error(call, std::move(*error));
      }
    }
    self->release(call);
  };
  if (run_inline) {
    job();
  } else {
    server_->executor_(std::move(job));
  }
}

json::value Session::on_tools_list(const json::value& params) {
  std::shared_lock lock(server_->registry_->mutex);
  return paginate(server_->registry_->tools, params, server_->options().page_size, "tools/list",
                  "tools", [](const auto& t) { return t->tool.definition(); });
}

void Session::on_tools_call(const std::shared_ptr<InFlight>& call) {
  const json::object& p = call->params_object();
  const std::string name = required_string(p, "name", "tools/call");
  std::shared_ptr<const RegisteredTool> tool;
  {
    std::shared_lock lock(server_->registry_->mutex);
    tool = server_->registry_->find_tool(name);
  }
  if (!tool) throw ProtocolError(kInvalidParams, "Unknown tool: " + name);

  // The arguments stay in the request the call owns: a copy was four allocations per call.
  const json::value* given = p.if_contains("arguments");
  if (given && given->is_null()) given = nullptr;
  if (given && !given->is_object()) {
    throw ProtocolError(kInvalidParams,
                        "Invalid params: tools/call \"arguments\" must be an object");
  }
  const json::value no_arguments = json::object();
  const json::value& arguments = given ? *given : no_arguments;
  // Since 2025-11-25 argument errors are tool results the model can read and correct.
  if (auto problem = tool->validator->validate(arguments)) {
    finish(call, ToolResult::error(fmt::format("Invalid arguments for tool {}: {}", name, *problem))
                     .to_json());
    return;
  }
  // A view into the call's own request, which outlives the job.
  const json::object* given_object = given ? &given->get_object() : nullptr;
  // Refused here, on the transport's thread, rather than after a wait in the executor's queue.
  std::shared_ptr<ToolAdmission> place = tool->tool.admit ? tool->tool.admit(p) : nullptr;
  run_async(call, tool->tool.run_inline, [tool, given_object, place](InFlight& ctx) {
    if (place) place->start();
    const json::object none;
    const json::object& args = given_object ? *given_object : none;
    // Returned, not assigned: assigning would copy a result built in its own storage.
    const auto run = [&]() -> ToolResult {
      try {
        return tool->tool.handler(args, ctx);
      } catch (const ToolError& e) {
        return ToolResult::error(e.what());
      } catch (const ProtocolError&) {
        throw;
      } catch (const std::exception& e) {
        return ToolResult::error(fmt::format("Tool {} failed: {}", tool->tool.name, e.what()));
      }
    };
    ToolResult result = run();
    if (place) place->finish(result.is_error);
    return json::value(std::move(result).to_json());
  });
}

json::value Session::on_resources_list(const json::value& params) {
  std::shared_lock lock(server_->registry_->mutex);
  return paginate(server_->registry_->resources, params, server_->options().page_size,
                  "resources/list", "resources", [](const auto& r) { return r->definition(); });
}

json::value Session::on_resource_templates_list(const json::value& params) {
  std::shared_lock lock(server_->registry_->mutex);
  return paginate(server_->registry_->templates, params, server_->options().page_size,
                  "resources/templates/list", "resourceTemplates",
                  [](const auto& t) { return t->definition(); });
}

void Session::on_resources_read(const std::shared_ptr<InFlight>& call) {
  const std::string uri = required_string(call->params_object(), "uri", "resources/read");
  std::shared_ptr<const Resource> resource;
  std::shared_ptr<const ResourceTemplate> tpl;
  std::map<std::string, std::string> variables;
  {
    std::shared_lock lock(server_->registry_->mutex);
    resource = server_->registry_->find_resource(uri);
    if (!resource) tpl = server_->registry_->find_template(uri, variables);
  }
  if (!resource && !tpl) {
    throw ProtocolError(jsonrpc::kResourceNotFound, "Resource not found: " + uri,
                        json::object{{"uri", uri}});
  }
  run_async(call, false, [resource, tpl, uri, variables](InFlight& ctx) {
    json::array contents = resource ? resource->read(uri, ctx) : tpl->read(uri, variables, ctx);
    return json::value(json::object{{"contents", std::move(contents)}});
  });
}

json::value Session::on_subscribe(const json::value& params, bool subscribe) {
  const std::string method = subscribe ? "resources/subscribe" : "resources/unsubscribe";
  const std::string uri = required_string(object_params(params, method), "uri", method);
  if (subscribe) {
    std::map<std::string, std::string> variables;
    std::shared_lock lock(server_->registry_->mutex);
    if (!server_->registry_->find_resource(uri) &&
        !server_->registry_->find_template(uri, variables)) {
      throw ProtocolError(jsonrpc::kResourceNotFound, "Resource not found: " + uri,
                          json::object{{"uri", uri}});
    }
  }
  std::lock_guard lock(mutex_);
  if (subscribe) {
    subscriptions_.insert(uri);
  } else {
    subscriptions_.erase(uri);
  }
  return json::object{};
}

json::value Session::on_prompts_list(const json::value& params) {
  std::shared_lock lock(server_->registry_->mutex);
  return paginate(server_->registry_->prompts, params, server_->options().page_size, "prompts/list",
                  "prompts", [](const auto& p) { return p->definition(); });
}

void Session::on_prompts_get(const std::shared_ptr<InFlight>& call) {
  const json::object& p = call->params_object();
  const std::string name = required_string(p, "name", "prompts/get");
  std::shared_ptr<const Prompt> prompt;
  {
    std::shared_lock lock(server_->registry_->mutex);
    prompt = server_->registry_->find_prompt(name);
  }
  if (!prompt) throw ProtocolError(kInvalidParams, "Unknown prompt: " + name);

  std::map<std::string, std::string> arguments;
  if (const auto* a = p.if_contains("arguments"); a && !a->is_null()) {
    if (!a->is_object()) {
      throw ProtocolError(kInvalidParams,
                          "Invalid params: prompts/get \"arguments\" must be an object");
    }
    for (const auto& [k, v] : a->get_object()) {
      if (!v.is_string()) {
        throw ProtocolError(kInvalidParams, fmt::format("Invalid params: argument \"{}\" of prompt "
                                                        "{} must be a string",
                                                        std::string_view(k), name));
      }
      arguments.emplace(std::string(k), std::string(v.get_string()));
    }
  }
  for (const auto& arg : prompt->arguments) {
    if (arg.required && !arguments.contains(arg.name)) {
      throw ProtocolError(kInvalidParams, fmt::format("Invalid params: prompt {} needs argument "
                                                      "\"{}\"",
                                                      name, arg.name));
    }
  }
  run_async(call, false, [prompt, arguments = std::move(arguments)](InFlight& ctx) {
    return json::value(prompt->get(arguments, ctx));
  });
}

json::value Session::on_complete(const json::value& params) {
  const json::object& p = object_params(params, "completion/complete");
  const auto* ref = p.if_contains("ref");
  const auto* argument = p.if_contains("argument");
  if (!ref || !ref->is_object() || !argument || !argument->is_object()) {
    throw ProtocolError(
        kInvalidParams,
        "Invalid params: completion/complete needs \"ref\" and \"argument\" objects");
  }
  const auto* type = ref->get_object().if_contains("type");
  if (!type || !type->is_string() ||
      (type->get_string() != "ref/prompt" && type->get_string() != "ref/resource")) {
    throw ProtocolError(kInvalidParams,
                        "Invalid params: ref.type must be \"ref/prompt\" or \"ref/resource\"");
  }
  json::object context;
  if (const auto* c = p.if_contains("context"); c && c->is_object()) context = c->get_object();
  CompletionHandler handler;
  {
    std::shared_lock lock(server_->registry_->mutex);
    handler = server_->registry_->completion;
  }
  std::vector<std::string> values;
  if (handler) values = handler(ref->get_object(), argument->get_object(), context);
  // The spec caps a completion at 100 values.
  const std::size_t total = values.size();
  if (values.size() > 100) values.resize(100);
  json::array out;
  for (auto& v : values) out.emplace_back(std::move(v));
  return json::object{
      {"completion",
       json::object{{"values", std::move(out)}, {"total", total}, {"hasMore", total > 100}}}};
}

}  // namespace mcpclass::server
