#include "mcpclass/service/classification_service.hpp"

#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/service/reranking.hpp"
#include "mcpclass/service/token_spans.hpp"
#include "mcpclass/transport/server/http_server_config.hpp"
#include "service/classification_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

namespace mcpclass::service {

namespace {

// Workers a batching classifier may ask for (max_batch and max_running allow 1024 × 257).
constexpr std::size_t kMaxBatchWorkers = 256;

std::size_t worker_threads(std::size_t requested, const config::Config& config) {
  // An admitted call waits for its turn on a worker, so that it is dropped at its deadline
  // rather than when a worker comes free: every place needs one.
  const auto& admission = config.server.admission;
  const std::size_t places =
      admission.max_concurrent > 0 ? admission.max_concurrent + admission.max_queue : 0;
  if (requested != 0) return std::max(requested, places);
  // Calls of a batch wait for each other on workers. (Counting trained_head's max_batch alone
  // left kind transformer, batched by default, 2 workers on 2 cores: batches of 1.6 texts at 8
  // connections, not 8.)
  const bool batched =
      config.classifier.kind == "trained_head" || config.classifier.kind == "transformer";
  const std::size_t batch =
      batched ? std::min(config.classifier.learned.batching_callers(), kMaxBatchWorkers) : 0;
  return std::max(
      {std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 8), batch, places});
}

// server.cache in front of a classifier whose answers may be reused.
std::shared_ptr<const classify::Classifier> with_cache(
    std::shared_ptr<const classify::Classifier> classifier, const classify::CacheOptions& cache) {
  if (cache.entries == 0 || !classifier->cacheable()) return classifier;
  return std::make_shared<classify::CachedClassifier>(std::move(classifier), cache);
}

std::shared_ptr<const ServedClassifier> serve(
    std::shared_ptr<const classify::Classifier> classifier, std::uint64_t generation) {
  ServedClassifier served{classifier, classify::provenance_of(*classifier, generation), {}, {}, {}};
  const boost::json::object info = classifier->info();
  const auto* model = info.if_contains("model");
  served.model = model != nullptr && model->is_string() ? std::string(model->get_string())
                                                        : classifier->kind();
  if (auto names = classify::task_names(*classifier); !names.empty()) served.task = names.front();
  for (auto& [name, task] : classifier->tasks())
    served.tasks.push_back({name, task, classify::provenance_of(*task, generation)});
  return std::make_shared<const ServedClassifier>(std::move(served));
}

// The `token_classifier` section's model and tool name, or {nullptr, ""} when there is none.
// Throws ConfigError.
std::pair<std::shared_ptr<const learned::TokenClassifier>, std::string> token_classifier_of(
    const config::Config& config) {
  const auto& t = config.token_classifier;
  if (!t) return {nullptr, {}};
  if (t->tool == "classify_text" || t->tool == "list_categories")
    throw config::ConfigError("token_classifier.tool", "'" + t->tool + "' is taken by the service");
  return {config::make_token_classifier(config), t->tool};
}

}  // namespace

ClassificationService::ClassificationService(const config::Config& config,
                                             std::shared_ptr<const classify::Classifier> classifier,
                                             ServiceOptions options)
    : served_(serve(with_cache(classifier ? std::move(classifier)
                                          : std::shared_ptr<const classify::Classifier>(
                                                config::make_classifier(config)),
                               config.server.cache),
                    1)),
      settings_(config.server),
      on_classified_(std::move(options.on_classified)),
      spans_(std::move(options.spans)),
      counters_(std::make_shared<ClassificationCounters>(served_.load()->classifier->categories())),
      admission_(settings_.admission.max_concurrent > 0
                     ? std::make_shared<util::AdmissionGate>(settings_.admission)
                     : nullptr),
      workers_(worker_threads(options.worker_threads, config)),
      pool_(workers_) {
  server::ServerOptions server_options;
  server_options.name = settings_.name;
  server_options.version = settings_.version;
  server_options.instructions =
      "Call classify_text to classify a query and get the recommended model and reasoning "
      "setting; list_categories gives the categories in class-index order.";
  server_ = server::Server::create(server_options, executor_);
  publish(*served_.load());
  auto [tokens, tool] = token_classifier_of(config);
  publish_token_classifier(std::move(tokens), tool);
}

void ClassificationService::publish_token_classifier(
    std::shared_ptr<const learned::TokenClassifier> classifier, const std::string& tool) {
  {
    std::lock_guard lock(token_tool_mutex_);
    if (!token_tool_.empty() && token_tool_ != tool) server_->remove_tool(token_tool_);
    token_tool_ = classifier ? tool : std::string();
  }
  if (classifier)
    register_token_classification(*server_, classifier, tool, settings_.max_text_length,
                                  tool_metrics_, admission_);
  token_classifier_.store(std::move(classifier));
}

void ClassificationService::publish(const ServedClassifier& served) {
  const auto& classifier = served.classifier;
  register_classification(
      *server_, classifier,
      {.max_text_length = settings_.max_text_length,
       .on_classified =
           [counters = counters_, also = on_classified_](const classify::Classification& c) {
             counters->count(c);
             if (also) also(c);
           },
       .metrics = tool_metrics_,
       .admission = admission_,
       .provenance = served.provenance,
       .spans = spans_});
  if (classifier->reranks())
    register_reranking(*server_, classifier,
                       {settings_.max_text_length, settings_.max_rerank_documents}, tool_metrics_,
                       admission_);
  else
    server_->remove_tool("rerank");  // a reload from a reranker to a classifier
  // The other tasks of a base shared by several adapters: a tool each. Their answers are not
  // the categories' (the counters and on_classified count classify_text's).
  std::vector<std::string> task_tools;
  for (const auto& task : served.tasks) {
    register_task_classification(*server_, task.name, task.classifier,
                                 {.max_text_length = settings_.max_text_length,
                                  .on_classified = {},
                                  .metrics = tool_metrics_,
                                  .admission = admission_,
                                  .provenance = task.provenance,
                                  .spans = spans_});
    task_tools.push_back("classify_" + task.name);
  }
  for (const auto& old : task_tools_)
    if (std::find(task_tools.begin(), task_tools.end(), old) == task_tools.end())
      server_->remove_tool(old);
  task_tools_ = std::move(task_tools);
  std::vector<std::string> names;
  for (const auto& c : classifier->categories()) names.push_back(c.name);
  for (const auto& old : prompt_names_) {
    if (std::find(names.begin(), names.end(), old) == names.end()) server_->remove_prompt(old);
  }
  prompt_names_ = std::move(names);
}

std::string ClassificationService::token_tool() const {
  std::lock_guard lock(token_tool_mutex_);
  return token_tool_;
}

void ClassificationService::count_classification(const classify::Classification& c) const {
  counters_->count(c);
  if (on_classified_) on_classified_(c);
}

ReloadResult ClassificationService::reload(const std::function<config::Config()>& load,
                                           const ReloadStage& stage) {
  std::lock_guard lock(reload_mutex_);
  std::shared_ptr<const classify::Classifier> next;
  std::pair<std::shared_ptr<const learned::TokenClassifier>, std::string> next_tokens;
  std::shared_ptr<const ServedClassifier> served;
  std::function<void()> swap_stage;
  try {
    const config::Config config = load();
    next = with_cache(std::shared_ptr<const classify::Classifier>(config::make_classifier(config)),
                      settings_.cache);
    next_tokens = token_classifier_of(config);
    // Inside the try: a model id reads the weights' files, which may have gone meanwhile.
    served = serve(next, generation_.load() + 1);
    if (stage) swap_stage = stage(config, *served);
  } catch (const std::exception& e) {
    reload_failures_.fetch_add(1);
    return {.ok = false, .generation = generation_.load(), .error = e.what()};
  }
  const auto previous = served_.exchange(served)->classifier;
  if (swap_stage) swap_stage();
  publish(*served);
  publish_token_classifier(std::move(next_tokens.first), next_tokens.second);
  const bool categories_changed =
      categories_document(previous->categories()) != categories_document(next->categories());
  if (categories_changed) server_->notify_resource_updated(std::string(kCategoriesUri));
  return {.ok = true, .generation = generation_.fetch_add(1) + 1, .error = {}};
}

boost::json::object ClassificationService::health() const {
  const auto current = served();
  boost::json::object h = current->classifier->info();
  h["provenance"] = current->provenance.to_json();
  return h;
}

ClassificationService::~ClassificationService() {
  stop();
}

transport::server::HttpServerOptions ClassificationService::http_options() const {
  return transport::server::read_http_server_options(settings_.http);
}

std::string ClassificationService::prometheus() const {
  std::string text = counters_->prometheus();
  text += fmt::format(
      "# HELP mcpclass_config_generation Configurations served since start (1 = the first; "
      "+1 per successful reload).\n"
      "# TYPE mcpclass_config_generation gauge\nmcpclass_config_generation {}\n"
      "# HELP mcpclass_config_reload_failures_total Reloads refused (the configuration did not "
      "load or build); the previous one kept serving.\n"
      "# TYPE mcpclass_config_reload_failures_total counter\n"
      "mcpclass_config_reload_failures_total {}\n",
      generation_.load(), reload_failures_.load());
  text += tool_metrics_->prometheus();
  if (admission_)
    text += util::admission_prometheus(
        admission_->counts(), "mcpclass_admission",
        "Classification calls (classify_text, the span tool, POST /classify and /classify/spans)");
  const auto current = classifier();
  const auto* cached = dynamic_cast<const classify::CachedClassifier*>(current.get());
  if (cached == nullptr) return text;
  return text +
         fmt::format(
             "# HELP mcpclass_cache_hits_total classify_text results served from server.cache.\n"
             "# TYPE mcpclass_cache_hits_total counter\nmcpclass_cache_hits_total {}\n"
             "# HELP mcpclass_cache_misses_total classify_text results computed (not in the "
             "cache).\n"
             "# TYPE mcpclass_cache_misses_total counter\nmcpclass_cache_misses_total {}\n"
             "# HELP mcpclass_cache_entries Results in server.cache.\n"
             "# TYPE mcpclass_cache_entries gauge\nmcpclass_cache_entries {}\n"
             "# HELP mcpclass_cache_bytes Bytes of the keys and results in server.cache (at most "
             "its max_bytes).\n"
             "# TYPE mcpclass_cache_bytes gauge\nmcpclass_cache_bytes {}\n"
             "# HELP mcpclass_cache_evictions_total Results dropped from server.cache to make "
             "room (by entries or max_bytes).\n"
             "# TYPE mcpclass_cache_evictions_total counter\nmcpclass_cache_evictions_total {}\n",
             cached->hits(), cached->misses(), cached->size(), cached->bytes(),
             cached->evictions());
}

void ClassificationService::stop() {
  pool_.stop();
}

}  // namespace mcpclass::service
