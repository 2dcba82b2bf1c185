// The classification server a Config describes: its classifier, the worker pool for handlers,
// and the MCP engine with the classification tools (mcp_tools.hpp). The one place that builds
// it: the CLI's `serve`, the C ABI's mcpc_server_new and so the Go and Python bindings start
// here, then attach the transports they want.
// reload() swaps in the classifier of a new configuration while the server runs.
// Thread-safety: the accessors and reload() may be called from any thread (reloads run one at a
// time); stop() and the destructor belong to the owner, after the transports that use server()
// have stopped.
#pragma once

#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/service/tool_metrics.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/executor.hpp"
#include "mcpclass/util/span_record.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mcpclass::service {

class ClassificationCounters;

struct ServiceOptions {
  /// Worker threads for tool handlers that do not run inline; 0 = the hardware threads, at
  /// least 2 and at most 8, and at least a batching classifier's max_batch.
  std::size_t worker_threads = 0;
  /// Called after every successful classify_text, on the thread that ran it (see ToolOptions).
  std::function<void(const classify::Classification&)> on_classified;
  /// Where classify_text records its spans (ToolOptions::spans; `serve` passes its OTLP
  /// exporter). Null: none.
  std::shared_ptr<util::SpanSink> spans;
};

/// What reload() did.
struct ReloadResult {
  bool ok = false;
  /// The generation serving after the call (1 at start, +1 per successful reload).
  std::uint64_t generation = 0;
  /// Why the configuration was refused (empty when ok).
  std::string error;
};

/// One generation's classifier with its provenance (generation included), swapped in together so
/// an answer names the generation of the classifier that computed it.
struct ServedClassifier {
  std::shared_ptr<const classify::Classifier> classifier;
  classify::Provenance provenance;  ///< provenance_of(*classifier, generation), computed once.
  /// The classifier's info() "model" (its kind when it names none), read once: what /rerank
  /// answers name.
  std::string model;
  /// classify_text's task when the classifier is one of a base shared by several adapters
  /// (classify::task_names()' first), else empty.
  std::string task;
  /// One of the base's other tasks (Classifier::tasks()), with its provenance computed once.
  struct Task {
    std::string name;
    std::shared_ptr<const classify::Classifier> classifier;
    classify::Provenance provenance;
  };
  std::vector<Task> tasks;
};

/// A front end's part of a reload: builds what it serves from the new configuration and the
/// generation's classifier with its provenance (the one computation of it), throwing to refuse
/// the reload, and returns what swaps it in (called as the new classifier is swapped in; may be
/// empty).
using ReloadStage = std::function<std::function<void()>(const config::Config& config,
                                                        const ServedClassifier& served)>;

class ClassificationService {
 public:
  /// Builds the configured classifier unless `classifier` is given, then the engine
  /// (`server.name`, `server.version`, `server.max_text_length`), and the `token_classifier`
  /// with its tool (token_spans.hpp) when configured. Throws ConfigError.
  explicit ClassificationService(const config::Config& config,
                                 std::shared_ptr<const classify::Classifier> classifier = nullptr,
                                 ServiceOptions options = {});
  /// Stops the worker pool (stop()).
  ~ClassificationService();
  ClassificationService(const ClassificationService&) = delete;
  ClassificationService& operator=(const ClassificationService&) = delete;

  const std::shared_ptr<server::Server>& server() const noexcept { return server_; }
  /// The classifier of the current generation.
  std::shared_ptr<const classify::Classifier> classifier() const {
    return served_.load()->classifier;
  }
  /// The classifier of the current generation with its provenance, read together.
  std::shared_ptr<const ServedClassifier> served() const { return served_.load(); }
  /// The gate of `server.admission` (null when unbounded): classify_text takes its places
  /// through the engine, the HTTP front's /classify directly.
  const std::shared_ptr<util::AdmissionGate>& admission_gate() const { return admission_; }
  const config::ServerSettings& settings() const noexcept { return settings_; }
  /// The `token_classifier` of the current generation, or nullptr when none is configured.
  std::shared_ptr<const learned::TokenClassifier> token_classifier() const {
    return token_classifier_.load();
  }
  /// The name of the token classifier's tool (empty without one).
  std::string token_tool() const;
  /// Runs jobs on the worker pool that runs the tool handlers (until stop()).
  const util::Executor& executor() const noexcept { return executor_; }
  /// The pool's threads: ServiceOptions::worker_threads, or when 0 the hardware threads (2 to 8)
  /// and at least what a batching classifier keeps busy (LearnedSettings::batching_callers) and
  /// `server.admission`'s places. A host that calls the classifier from a pool of its own (the
  /// routing proxy) sizes it so.
  std::size_t workers() const noexcept { return workers_; }
  /// Counts a classification served outside classify_text (the http_classify endpoint) as
  /// classify_text counts its own: `mcpclass_classifications_total` and
  /// ServiceOptions::on_classified.
  void count_classification(const classify::Classification& c) const;
  /// `server.http` as transport options: host, port, limits, TLS files, and the access rules
  /// with their secrets resolved. Throws ConfigError (an unset "${NAME}", an unreadable token
  /// file).
  transport::server::HttpServerOptions http_options() const;
  /// The classifier's info() (kind, model, ...) and its `provenance` (classify::Provenance): what
  /// /health reports before a front end adds its own fields.
  boost::json::object health() const;

  /// Loads a configuration with `load` (e.g. re-reads its file), builds its classifier (with a new,
  /// empty result cache) and swaps it in: calls in flight finish on the old classifier, later ones
  /// get the new one. Sessions are told what changed: `tools/list_changed` and
  /// `prompts/list_changed` when the categories change the definitions, `resources/updated` to
  /// subscribers of the categories resource. `stage` builds what a front end serves from the
  /// same configuration (the routing proxy's `route` section), swapped in with the classifier.
  /// The `token_classifier` section is rebuilt too (its model re-read): its tool is replaced,
  /// added, renamed or removed as the section says. Other sections than `categories`,
  /// `classifier`, `routing`, `token_classifier` and those `stage` applies need a restart and
  /// are ignored. Never throws: a configuration that fails to load or build (or
  /// that `stage` refuses) is refused, counted, and the current generation keeps serving.
  ReloadResult reload(const std::function<config::Config()>& load, const ReloadStage& stage = {});
  std::uint64_t generation() const noexcept { return generation_.load(); }

  /// Prometheus text: classifications by category, the configuration generation and reload
  /// failures, the tools' latency histograms (ToolMetrics), and the result cache (hits, misses,
  /// size) when there is one, and admission control (admitted, rejected, expired, the share of
  /// calls classified) under server.admission.
  std::string prometheus() const;
  /// Finishes the handler calls still queued and joins the workers. Idempotent.
  void stop();

 private:
  void publish(const ServedClassifier& served);
  void publish_token_classifier(std::shared_ptr<const learned::TokenClassifier> classifier,
                                const std::string& tool);

  std::atomic<std::shared_ptr<const ServedClassifier>> served_;
  config::ServerSettings settings_;
  std::function<void(const classify::Classification&)> on_classified_;
  std::shared_ptr<util::SpanSink> spans_;  // classify_text's spans; null: none
  std::shared_ptr<ClassificationCounters> counters_;
  std::shared_ptr<ToolMetrics> tool_metrics_ = std::make_shared<ToolMetrics>();
  std::shared_ptr<util::AdmissionGate> admission_;  // server.admission; null when unbounded
  std::size_t workers_;
  util::ThreadPool pool_;
  util::Executor executor_ = pool_.executor();
  std::shared_ptr<server::Server> server_;
  std::atomic<std::shared_ptr<const learned::TokenClassifier>> token_classifier_;
  mutable std::mutex token_tool_mutex_;    // token_tool_, which reloads change
  std::string token_tool_;                 // the token classifier's tool name, when registered
  std::mutex reload_mutex_;                // one reload at a time
  std::vector<std::string> prompt_names_;  // the prompts this service registered
  std::vector<std::string> task_tools_;    // classify_<task> of the classifier's other tasks
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<std::uint64_t> reload_failures_{0};
};

}  // namespace mcpclass::service
