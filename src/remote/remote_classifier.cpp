// The remote classifier: tool discovery and the category cache over a ToolSession.
#include "mcpclass/remote/remote_classifier.hpp"

#include "remote/outgoing_trace.hpp"
#include "remote/remote_detail.hpp"
#include "remote/tool_session.hpp"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>

namespace mcpclass::remote {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

struct RemoteClassifier::Impl {
  RemoteClassifierOptions options;
  std::string tool;
  std::atomic<bool> categories_dirty{false};
  detail::ToolSession session;

  mutable std::mutex mutex;                                           // everything below
  std::vector<std::shared_ptr<const classify::CategorySet>> history;  // keeps references valid
  std::shared_ptr<const classify::CategorySet> current;
  std::size_t remote_count = 0;
  Clock::time_point fetched_at{};
  std::string last_model;

  Impl(RemoteClassifierOptions o, std::shared_ptr<client::ClientTransport> t)
      : options(std::move(o)),
        session(
            options, std::move(t), "mcpclass-remote-classifier", [this] { discover(); },
            [this](std::string_view method) {
              if (method.ends_with("list_changed")) categories_dirty = true;
            }) {}

  // After each (re)connect: the tool to call and the categories.
  void discover() {
    tool = discover_classification_tool(session.list_tools(), options.tool);
    fetch_categories();
  }

  void fetch_categories() {
    const json::object result = session.call_tool(options.categories_tool, json::object{});
    std::size_t count = 0;
    auto set = std::make_shared<const classify::CategorySet>(
        detail::parse_categories(detail::tool_payload(result, options.categories_tool),
                                 options.fallback_category, options.num_categories, count));
    std::lock_guard lock(mutex);
    if (!current || !(*current == *set)) {
      history.push_back(set);
      current = set;
    }
    remote_count = count;
    fetched_at = Clock::now();
    categories_dirty = false;
  }

  void maybe_refresh() {
    bool due;
    {
      std::lock_guard lock(mutex);
      due = !options.cache_categories || categories_dirty ||
            Clock::now() - fetched_at >= options.refresh_interval;
    }
    if (!due || !session.connected()) return;
    try {
      fetch_categories();
    } catch (const RemoteError& e) {
      session.note_error(
          fmt::format("category refresh failed (keeping the cached set): {}", e.what()));
    }
  }

  classify::Classification attempt(std::string_view text, const json::object& meta) {
    maybe_refresh();
    const json::object result =
        session.call_tool(tool, json::object{{"text", text}, {"with_probabilities", true}}, meta);
    std::shared_ptr<const classify::CategorySet> cats;
    std::size_t count;
    {
      std::lock_guard lock(mutex);
      cats = current;
      count = remote_count;
    }
    try {
      return detail::parse_classification(detail::tool_payload(result, tool), *cats, count,
                                          options.confidence_threshold, options.fallback_category);
    } catch (const RemoteInvalidResult&) {
      categories_dirty = true;  // maybe the server's categories changed
      throw;
    }
  }

  classify::Classification classify(std::string_view text, const json::object& meta) {
    std::optional<classify::Classification> out;
    session.call([&] { out = attempt(text, meta); });
    std::lock_guard lock(mutex);
    last_model = out->model;
    return std::move(*out);
  }
};

RemoteClassifier::RemoteClassifier(RemoteClassifierOptions options)
    : RemoteClassifier(options, make_remote_transport(options)) {}

RemoteClassifier::RemoteClassifier(RemoteClassifierOptions options,
                                   std::shared_ptr<client::ClientTransport> transport)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(transport))) {
  impl_->session.connect_with_retries();
}

RemoteClassifier::~RemoteClassifier() = default;

const classify::CategorySet& RemoteClassifier::categories() const {
  std::lock_guard lock(impl_->mutex);
  return *impl_->current;
}

classify::Classification RemoteClassifier::classify(
    std::string_view text, const classify::ClassifyOptions& options) const {
  const detail::OutgoingTrace trace(options);
  return detail::traced_call(
      trace, "tools/call",
      {{"mcp.method.name", "tools/call"}, {"mcpclass.endpoint", impl_->session.where()}},
      [&] { return impl_->classify(text, trace.meta()); });
}

json::object RemoteClassifier::info() const {
  json::object out = impl_->session.stats();
  std::lock_guard lock(impl_->mutex);
  out["kind"] = "remote";
  out["model"] = impl_->last_model.empty() ? "remote:" + impl_->tool : impl_->last_model;
  out["index_size"] = 0;
  out["tool"] = impl_->tool;
  out["categories"] = impl_->current ? impl_->current->size() : 0;
  return out;
}

const std::string& RemoteClassifier::tool_name() const {
  return impl_->tool;
}

void RemoteClassifier::refresh_categories() const {
  impl_->fetch_categories();
}

}  // namespace mcpclass::remote
