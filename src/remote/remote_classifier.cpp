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
  std::atomic<bool> pairs{false};    // the tool's inputSchema has text_pair
  std::atomic<bool> reranks{false};  // the server has a rerank tool
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
    const auto tools = session.list_tools();
    tool = discover_classification_tool(tools, options.tool);
    pairs = tool_takes(tools, tool, "text_pair");
    reranks = tool_takes(tools, "rerank", "documents");
    fetch_categories();
  }

  // Whether `tools` has `name` with `property` in its inputSchema: a server that would ignore
  // an argument its schema does not declare must not be sent one.
  static bool tool_takes(const json::array& tools, std::string_view name,
                         std::string_view property) {
    for (const auto& t : tools) {
      const auto* o = t.if_object();
      const auto* n = o != nullptr ? o->if_contains("name") : nullptr;
      if (n == nullptr || !n->is_string() || n->get_string() != name) continue;
      const auto* schema = o->if_contains("inputSchema");
      const auto* props = schema != nullptr && schema->is_object()
                              ? schema->get_object().if_contains("properties")
                              : nullptr;
      return props != nullptr && props->is_object() && props->get_object().contains(property);
    }
    return false;
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

  classify::Classification attempt(std::string_view text, std::optional<std::string_view> pair,
                                   const json::object& meta) {
    maybe_refresh();
    json::object arguments{{"text", text}, {"with_probabilities", true}};
    if (pair) arguments["text_pair"] = *pair;
    const json::object result = session.call_tool(tool, std::move(arguments), meta);
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

  classify::Classification classify(std::string_view text, std::optional<std::string_view> pair,
                                    const json::object& meta) {
    std::optional<classify::Classification> out;
    session.call([&] { out = attempt(text, pair, meta); });
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
      [&] { return impl_->classify(text, std::nullopt, trace.meta()); });
}

bool RemoteClassifier::takes_pairs() const {
  return impl_->pairs;
}

std::vector<classify::Classification> RemoteClassifier::classify_pairs(
    std::span<const classify::TextPair> pairs, const classify::ClassifyOptions& options) const {
  if (!impl_->pairs)
    throw classify::ClassifyError("the remote tool " + impl_->tool + " at " +
                                  impl_->session.where() +
                                  " takes no text_pair: its server classifies one text");
  std::vector<classify::Classification> out;
  out.reserve(pairs.size());
  for (const auto& pair : pairs) {
    const detail::OutgoingTrace trace(options);
    out.push_back(detail::traced_call(
        trace, "tools/call",
        {{"mcp.method.name", "tools/call"}, {"mcpclass.endpoint", impl_->session.where()}},
        [&] { return impl_->classify(pair.text, pair.text_pair, trace.meta()); }));
  }
  return out;
}

bool RemoteClassifier::reranks() const {
  return impl_->reranks;
}

std::vector<classify::RerankScore> RemoteClassifier::rerank(
    std::string_view query, std::span<const std::string_view> passages,
    const classify::ClassifyOptions& options) const {
  if (!impl_->reranks) return Classifier::rerank(query, passages, options);
  json::array documents;
  for (const auto passage : passages) documents.emplace_back(passage);
  const detail::OutgoingTrace trace(options);
  return detail::traced_call(
      trace, "tools/call",
      {{"mcp.method.name", "tools/call"}, {"mcpclass.endpoint", impl_->session.where()}}, [&] {
        std::vector<classify::RerankScore> out;
        impl_->session.call([&] {
          const auto result = impl_->session.call_tool(
              "rerank", json::object{{"query", query}, {"documents", documents}}, trace.meta());
          out =
              detail::parse_rerank_scores(detail::tool_payload(result, "rerank"), passages.size());
        });
        return out;
      });
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
