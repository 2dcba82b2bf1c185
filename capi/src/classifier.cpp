// Classifiers: from a configuration or host-defined through a callback; classify to structs and
// JSON, batches, categories, and the reasoning decision on a caller's distribution.
#include "internal.hpp"

#include "mcpclass/classify/entropy.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/service/reranking.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <vector>

using namespace mcpclass;
using namespace mcpclass::capi;
namespace json = boost::json;

namespace {

// A classifier whose distribution comes from the host. Categories and routing are the config's.
class HostClassifier final : public classify::Classifier {
 public:
  HostClassifier(const config::Config& config, mcpc_classify_callback callback, void* user_data,
                 mcpc_destroy_callback destroy)
      : categories_(config.categories),
        policy_(config.routing),
        callback_(callback),
        user_data_(user_data),
        destroy_(destroy) {}
  ~HostClassifier() override {
    if (destroy_ != nullptr) destroy_(user_data_);
  }
  HostClassifier(const HostClassifier&) = delete;
  HostClassifier& operator=(const HostClassifier&) = delete;

  using Classifier::classify;
  const classify::CategorySet& categories() const override { return categories_; }

  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions&) const override {
    std::vector<double> probabilities(categories_.size(), 0.0);
    const std::string copy(text);  // NUL-terminated for the callback
    char message[512] = {};
    const int rc = callback_(user_data_, copy.c_str(), copy.size(), probabilities.data(),
                             probabilities.size(), message, sizeof message);
    if (rc != 0) {
      message[sizeof message - 1] = '\0';
      throw classify::ClassifyError(message[0] != '\0' ? std::string("host classifier: ") + message
                                                       : "host classifier failed with status " +
                                                             std::to_string(rc));
    }
    return classify::make_classification(text, categories_, std::move(probabilities), policy_);
  }

  std::string kind() const override { return "host"; }
  json::object info() const override {
    return json::object{{"kind", "host"}, {"model", policy_.default_model}, {"index_size", 0}};
  }

 private:
  classify::CategorySet categories_;
  classify::RoutingPolicy policy_;
  mcpc_classify_callback callback_;
  void* user_data_;
  mcpc_destroy_callback destroy_;
};

const config::Config& config_or_default(const mcpc_config* config,
                                        std::unique_ptr<config::Config>& storage) {
  if (config != nullptr) return config->config;
  storage = std::make_unique<config::Config>(config::default_config());
  return *storage;
}

void fill_decision(Cursor& cursor, mcpc_decision* out, const classify::ReasoningDecision& d) {
  const char* reason = cursor.str(d.reason);
  const char* strategy = cursor.str(d.strategy);
  auto* top = cursor.take<mcpc_category_probability>(d.top_categories.size());
  for (std::size_t i = 0; i < d.top_categories.size(); ++i) {
    const char* name = cursor.str(d.top_categories[i].name);
    if (top != nullptr) top[i] = {name, d.top_categories[i].probability};
  }
  if (out != nullptr) {
    *out = mcpc_decision{d.use_reasoning, d.confidence, reason,
                         strategy,        top,          d.top_categories.size()};
  }
}

mcpc_provenance fill_provenance(Cursor& cursor, const classify::Provenance& p) {
  const char* kind = cursor.str(p.kind);
  const char* model_id = cursor.str(p.model_id);
  const char* tokenizer_id = p.tokenizer_id.empty() ? nullptr : cursor.str(p.tokenizer_id);
  const char* taxonomy_id = cursor.str(p.taxonomy_id);
  return {kind, model_id, tokenizer_id, taxonomy_id, p.generation, p.cached, p.fallback};
}

void fill_result(Cursor& cursor, mcpc_result* out, const classify::Classification& c,
                 const classify::Provenance& provenance) {
  auto* probabilities = cursor.take<double>(c.probabilities.size());
  if (probabilities != nullptr) {
    std::copy(c.probabilities.begin(), c.probabilities.end(), probabilities);
  }
  const char* category = cursor.str(c.category);
  const char* model = cursor.str(c.model);
  mcpc_decision decision{};
  fill_decision(cursor, out != nullptr ? &decision : nullptr, c.decision);
  const mcpc_provenance origin = fill_provenance(cursor, provenance.of(c));
  if (out != nullptr) {
    *out = mcpc_result{c.class_index,
                       category,
                       c.confidence,
                       probabilities,
                       c.probabilities.size(),
                       c.entropy,
                       model,
                       c.use_reasoning,
                       decision,
                       origin,
                       c.in_scope.has_value(),
                       c.in_scope.value_or(0.0)};
  }
}

// What `run` returns, under server.admission when the handle has it: a place taken first
// (MCPC_ERR_OVERLOADED without one, or once `timeout_ms`, 0 for none, passed in the queue).
template <typename Run>
auto admitted(const mcpc_classifier& c, unsigned timeout_ms, Run&& run) {
  if (!c.admission) return run();
  std::optional<util::AdmissionGate::Clock::time_point> deadline;
  if (timeout_ms > 0)
    deadline = util::AdmissionGate::Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto admission = c.admission->admit(deadline);
  auto why = admission.refusal;
  if (admission.ticket) why = admission.ticket->start();
  if (why == util::AdmissionRefusal::rejected)
    fail(MCPC_ERR_OVERLOADED,
         "every classification slot and queue place is taken (server.admission: " +
             c.admission->limits_text() + ")");
  if (why == util::AdmissionRefusal::expired)
    fail(MCPC_ERR_OVERLOADED,
         "the call's deadline passed before it could be classified (server.admission: " +
             c.admission->limits_text() + ")");
  auto result = run();
  admission.ticket->succeeded();
  return result;
}

// Validates the text (and a pair's second text) like the classify_text tool does, then
// classifies. `timeout_ms` 0: no deadline. Under server.admission the call takes a place first.
classify::Classification classify_checked(const mcpc_classifier& c, std::string_view text,
                                          bool with_probabilities, unsigned timeout_ms = 0,
                                          std::optional<std::string_view> text_pair = {}) {
  if (auto problem = service::text_problem(text, c.max_text_length)) {
    fail(MCPC_ERR_INVALID_TEXT, *problem);
  }
  if (text_pair) {
    if (!c.classifier->takes_pairs())
      fail(MCPC_ERR_INVALID_ARGUMENT,
           "this classifier (" + c.classifier->kind() +
               ") classifies one text: text_pair needs a sentence-pair model (kind transformer "
               "over an NLI, fact-check or cross-encoder checkpoint)");
    if (auto problem = service::text_problem(*text_pair, c.max_text_length))
      fail(MCPC_ERR_INVALID_TEXT, "text_pair: " + *problem);
  }
  const classify::ClassifyOptions options{with_probabilities};
  return admitted(c, timeout_ms, [&] {
    if (!text_pair) return c.classifier->classify(text, options);
    const classify::TextPair pair{text, *text_pair};
    return c.classifier->classify_pairs(std::span(&pair, 1), options).front();
  });
}

// mcpc_classify_json_ex and mcpc_classify_pair_json: the tool's JSON of one classification.
int classify_json(const mcpc_classifier* classifier, const char* text, size_t text_len,
                  const char* text_pair, size_t text_pair_len, bool pair,
                  const mcpc_classify_options* options, char** out_json, mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(classifier, "classifier");
    const unsigned flags = options ? options->flags : 0;
    if ((flags & ~(MCPC_JSON_PROBABILITIES | MCPC_JSON_TOOL_RESULT)) != 0) {
      fail(MCPC_ERR_INVALID_ARGUMENT, "unknown flag bits " + std::to_string(flags));
    }
    const bool with_probabilities = (flags & MCPC_JSON_PROBABILITIES) != 0;
    std::optional<std::string_view> second;
    if (pair) second = text_arg(text_pair, text_pair_len, "text_pair");
    const auto c = classify_checked(*classifier, text_arg(text, text_len, "text"),
                                    with_probabilities, options ? options->timeout_ms : 0, second);
    json::object wire = classify::to_wire(c, with_probabilities);
    if ((flags & MCPC_JSON_TOOL_RESULT) != 0) {
      // Built exactly as the classify_text tool builds its result.
      server::ToolResult result = server::ToolResult::text(json::serialize(wire));
      result.structured_content = std::move(wire);
      result.meta[classify::kMetaProvenance] = classifier->provenance.of(c).to_json();
      *out_json = dup_string(json::serialize(result.to_json()));
    } else {
      *out_json = dup_string(json::serialize(wire));
    }
    return MCPC_OK;
  });
}

mcpc_classifier* new_handle(std::shared_ptr<const classify::Classifier> classifier,
                            const config::Config& config) {
  auto* handle = new mcpc_classifier;
  if (classifier) handle->provenance = classify::provenance_of(*classifier, 1);
  handle->classifier = std::move(classifier);
  handle->max_text_length = config.server.max_text_length;
  handle->max_rerank_documents = config.server.max_rerank_documents;
  if (config.server.admission.max_concurrent > 0)
    handle->admission = std::make_shared<util::AdmissionGate>(config.server.admission);
  return handle;
}

}  // namespace

extern "C" {

int mcpc_classifier_new(const mcpc_config* config, mcpc_classifier** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    std::unique_ptr<config::Config> storage;
    const config::Config& cfg = config_or_default(config, storage);
    std::shared_ptr<const classify::Classifier> classifier = config::make_classifier(cfg);
    *out = new_handle(std::move(classifier), cfg);
    return MCPC_OK;
  });
}

int mcpc_classifier_new_host(const mcpc_config* config, mcpc_classify_callback classify,
                             void* user_data, mcpc_destroy_callback destroy, mcpc_classifier** out,
                             mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    if (classify == nullptr) fail(MCPC_ERR_INVALID_ARGUMENT, "classify must not be NULL");
    std::unique_ptr<config::Config> storage;
    const config::Config& cfg = config_or_default(config, storage);
    // The handle first: once HostClassifier exists, its destructor owns user_data.
    std::unique_ptr<mcpc_classifier> handle(new_handle(nullptr, cfg));
    handle->classifier = std::make_shared<HostClassifier>(cfg, classify, user_data, destroy);
    handle->provenance = classify::provenance_of(*handle->classifier, 1);
    *out = handle.release();
    return MCPC_OK;
  });
}

void mcpc_classifier_free(mcpc_classifier* classifier) {
  delete classifier;
}

size_t mcpc_classifier_category_count(const mcpc_classifier* classifier) {
  return classifier == nullptr ? 0 : classifier->classifier->categories().size();
}

int mcpc_classify(const mcpc_classifier* classifier, const char* text, size_t text_len,
                  mcpc_result** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(classifier, "classifier");
    const auto c = classify_checked(*classifier, text_arg(text, text_len, "text"), true);
    *out = pack<mcpc_result>([&](Cursor& cursor) {
      auto* r = cursor.take<mcpc_result>(1);
      fill_result(cursor, r, c, classifier->provenance);
      return r;
    });
    return MCPC_OK;
  });
}

void mcpc_result_free(mcpc_result* result) {
  std::free(result);
}

int mcpc_classify_json(const mcpc_classifier* classifier, const char* text, size_t text_len,
                       unsigned flags, char** out_json, mcpc_error** err) {
  const mcpc_classify_options options{flags, 0};
  return mcpc_classify_json_ex(classifier, text, text_len, &options, out_json, err);
}

int mcpc_classify_json_ex(const mcpc_classifier* classifier, const char* text, size_t text_len,
                          const mcpc_classify_options* options, char** out_json, mcpc_error** err) {
  return classify_json(classifier, text, text_len, nullptr, 0, false, options, out_json, err);
}

int mcpc_classify_pair_json(const mcpc_classifier* classifier, const char* text, size_t text_len,
                            const char* text_pair, size_t text_pair_len,
                            const mcpc_classify_options* options, char** out_json,
                            mcpc_error** err) {
  return classify_json(classifier, text, text_len, text_pair, text_pair_len, true, options,
                       out_json, err);
}

int mcpc_rerank_json(const mcpc_classifier* classifier, const char* request_json,
                     size_t request_len, const mcpc_classify_options* options, char** out_json,
                     mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(classifier, "classifier");
    if (options != nullptr && options->flags != 0)
      fail(MCPC_ERR_INVALID_ARGUMENT, "unknown flag bits " + std::to_string(options->flags));
    boost::system::error_code ec;
    auto parsed = json::parse(text_arg(request_json, request_len, "request_json"), ec);
    if (ec || !parsed.is_object())
      fail(MCPC_ERR_INVALID_TEXT,
           R"(request_json must be a JSON object: {"query": "...", "documents": ["...", ...]})");
    const auto& c = *classifier;
    if (!c.classifier->reranks())
      fail(MCPC_ERR_INVALID_ARGUMENT,
           "this classifier (" + c.classifier->kind() +
               ") does not rerank: reranking needs a cross-encoder (kind transformer over a "
               "checkpoint with 1 label)");
    try {
      const auto call = service::read_rerank_arguments(parsed.get_object());
      const auto ranked = admitted(c, options ? options->timeout_ms : 0, [&] {
        return service::rerank(*c.classifier, call.request,
                               {c.max_text_length, c.max_rerank_documents});
      });
      *out_json = dup_string(
          json::serialize(service::rerank_results(ranked, call.request, call.return_documents)));
    } catch (const service::RerankRequestError& e) {
      fail(MCPC_ERR_INVALID_TEXT, e.what());
    }
    return MCPC_OK;
  });
}

int mcpc_classify_batch(const mcpc_classifier* classifier, const char* const* texts,
                        const size_t* text_lens, size_t count, mcpc_batch** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(classifier, "classifier");
    if (count > 0) require(texts, "texts");
    std::vector<classify::Classification> results;
    results.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::string prefix = "texts[" + std::to_string(i) + "]: ";
      if (texts[i] == nullptr) fail(MCPC_ERR_INVALID_ARGUMENT, prefix + "must not be NULL");
      try {
        const std::size_t len = text_lens == nullptr ? MCPC_NTS : text_lens[i];
        results.push_back(classify_checked(*classifier, text_arg(texts[i], len, "text"), true));
      } catch (const Failure& e) {
        fail(e.code(), prefix + e.what());
      } catch (const classify::ClassifyError& e) {
        fail(MCPC_ERR_CLASSIFY, prefix + e.what());
      } catch (const classify::ConfigError& e) {  // no longer a ClassifyError; same status
        fail(MCPC_ERR_CLASSIFY, prefix + e.what());
      }
    }
    *out = pack<mcpc_batch>([&](Cursor& cursor) {
      auto* batch = cursor.take<mcpc_batch>(1);
      auto* items = cursor.take<mcpc_result>(results.size());
      for (std::size_t i = 0; i < results.size(); ++i) {
        fill_result(cursor, items != nullptr ? &items[i] : nullptr, results[i],
                    classifier->provenance);
      }
      if (batch != nullptr) *batch = mcpc_batch{results.size(), items};
      return batch;
    });
    return MCPC_OK;
  });
}

void mcpc_batch_free(mcpc_batch* batch) {
  std::free(batch);
}

int mcpc_classifier_categories(const mcpc_classifier* classifier, mcpc_categories** out,
                               mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(classifier, "classifier");
    const classify::CategorySet& set = classifier->classifier->categories();
    *out = pack<mcpc_categories>([&](Cursor& cursor) {
      auto* all = cursor.take<mcpc_categories>(1);
      auto* items = cursor.take<mcpc_category>(set.size());
      for (std::size_t i = 0; i < set.size(); ++i) {
        const classify::Category& c = set[i];
        const char* name = cursor.str(c.name);
        const char* description = cursor.str(c.description);
        const char* prompt = cursor.str(c.system_prompt);
        const char* model = c.model ? cursor.str(*c.model) : nullptr;
        if (items != nullptr) {
          items[i] = mcpc_category{name, description, prompt, model,
                                   c.use_reasoning ? (*c.use_reasoning ? 1 : 0) : -1};
        }
      }
      if (all != nullptr) *all = mcpc_categories{set.size(), items};
      return all;
    });
    return MCPC_OK;
  });
}

void mcpc_categories_free(mcpc_categories* categories) {
  std::free(categories);
}

int mcpc_classifier_categories_json(const mcpc_classifier* classifier, char** out_json,
                                    mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(classifier, "classifier");
    *out_json = dup_string(
        json::serialize(service::categories_document(classifier->classifier->categories())));
    return MCPC_OK;
  });
}

int mcpc_classifier_tasks_json(const mcpc_classifier* classifier, char** out_json,
                               mcpc_error** err) {
  return guard(err, [&] {
    require(out_json, "out_json");
    *out_json = nullptr;
    require(classifier, "classifier");
    json::array names;
    for (auto& name : classify::task_names(*classifier->classifier)) names.emplace_back(name);
    *out_json = dup_string(json::serialize(names));
    return MCPC_OK;
  });
}

int mcpc_classifier_task(const mcpc_classifier* classifier, const char* task, mcpc_classifier** out,
                         mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(classifier, "classifier");
    require(task, "task");
    auto found = classify::find_task(classifier->classifier, task);
    if (!found) {
      const auto names = classify::task_names(*classifier->classifier);
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      fail(MCPC_ERR_NOT_FOUND,
           "no task '" + std::string(task) + "': " +
               (names.empty() ? "the " + classifier->classifier->kind() +
                                    " classifier has no tasks (kind transformer with adapters: "
                                    "{task: DIR} has one per adapter)"
                              : "the classifier's tasks are " + known));
    }
    auto handle = std::make_unique<mcpc_classifier>(*classifier);
    // classify's own task is the classifier itself: its provenance (a checksum of the weights'
    // files) is the handle's already.
    if (found != classifier->classifier) handle->provenance = classify::provenance_of(*found, 1);
    handle->classifier = std::move(found);
    *out = handle.release();
    return MCPC_OK;
  });
}

double mcpc_entropy(const double* probabilities, size_t count) {
  if (count == 0) return 0.0;
  if (probabilities == nullptr) return std::numeric_limits<double>::quiet_NaN();
  return classify::shannon_entropy(std::span<const double>(probabilities, count));
}

double mcpc_normalized_entropy(const double* probabilities, size_t count) {
  if (count == 0) return 0.0;
  if (probabilities == nullptr) return std::numeric_limits<double>::quiet_NaN();
  return classify::normalized_entropy(std::span<const double>(probabilities, count));
}

int mcpc_reasoning_decide(const double* probabilities, const char* const* names,
                          const int* reasoning_flags, size_t count, double threshold,
                          mcpc_decision** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    if (!std::isfinite(threshold)) fail(MCPC_ERR_INVALID_ARGUMENT, "threshold must be finite");
    if (count > 0) {
      require(probabilities, "probabilities");
      require(names, "names");
    }
    std::vector<std::string> owned_names;
    owned_names.reserve(count);
    classify::ReasoningFlags flags;
    for (std::size_t i = 0; i < count; ++i) {
      if (names[i] == nullptr) {
        fail(MCPC_ERR_INVALID_ARGUMENT, "names[" + std::to_string(i) + "] must not be NULL");
      }
      owned_names.emplace_back(names[i]);
      if (reasoning_flags == nullptr) continue;
      const int f = reasoning_flags[i];
      if (f == 0 || f == 1) {
        flags[owned_names.back()] = f == 1;
      } else if (f != MCPC_REASONING_UNKNOWN) {
        fail(MCPC_ERR_INVALID_ARGUMENT, "reasoning_flags[" + std::to_string(i) + "] is " +
                                            std::to_string(f) + "; expected 1, 0 or -1");
      }
    }
    const std::span<const double> p(count > 0 ? probabilities : nullptr, count);
    const classify::ReasoningDecision d =
        classify::make_reasoning_decision(p, owned_names, flags, threshold);
    *out = pack<mcpc_decision>([&](Cursor& cursor) {
      auto* decision = cursor.take<mcpc_decision>(1);
      fill_decision(cursor, decision, d);
      return decision;
    });
    return MCPC_OK;
  });
}

void mcpc_decision_free(mcpc_decision* decision) {
  std::free(decision);
}

}  // extern "C"
