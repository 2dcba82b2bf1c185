#include "service/http_classify_app.hpp"

#include "mcpclass/service/token_spans.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "service/http_classify_wire.hpp"
#include "service/http_rerank_wire.hpp"
#include "service/request_spans.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <utility>
#include <variant>

namespace mcpclass::service::detail {

namespace json = boost::json;
using transport::server::HttpAppRequest;
using transport::server::HttpAppResponse;

namespace {

void refuse(HttpAppResponse& response, const ClassifyRefusal& refusal,
            transport::server::HttpHeaders headers = {}) {
  headers.emplace_back("Content-Type", "application/json");
  response.respond(refusal.status, std::move(headers),
                   classify_error_body(refusal.type, refusal.message));
}

// 404 for POST /classify/<name> when no task has that name, listing those there are.
ClassifyRefusal unknown_task(const ServedClassifier& served, std::string_view name) {
  if (served.task.empty())
    return {404, "not_found",
            "no task '" + std::string(name) + "': this server's classifier (" +
                served.classifier->kind() +
                ") has no tasks; POST /classify classifies with it (kind transformer with "
                "adapters: {task: DIR} serves one path per task)"};
  std::string names = served.task;
  for (const auto& t : served.tasks) names += ", " + t.name;
  return {404, "not_found",
          "no task '" + std::string(name) + "': this server's tasks are " + names +
              " (POST /classify/<task>)"};
}

class HttpClassifyApp final : public transport::server::HttpApp {
 public:
  HttpClassifyApp(const ClassificationService& service, std::shared_ptr<util::SpanSink> spans)
      : service_(service), spans_(std::move(spans)) {}

  bool handles(std::string_view path) const override {
    return path == kClassifyPath || path.starts_with(kClassifyTaskPrefix) || is_rerank_path(path);
  }
  std::string metrics_label() const override { return "classify"; }
  std::string scope_tool(std::string_view path) const override {
    if (is_rerank_path(path)) return "rerank";
    if (path == kClassifySpansPath) return service_.token_tool();
    // A task's path is scoped as its tool: classify_<task>, classify_text for its own task.
    if (path.starts_with(kClassifyTaskPrefix)) {
      const auto task = path.substr(kClassifyTaskPrefix.size());
      if (task != service_.served()->task) return "classify_" + std::string(task);
    }
    return "classify_text";
  }
  std::string too_large_body(std::string_view message) const override {
    return classify_error_body("payload_too_large", message);
  }

  void handle(HttpAppRequest request, std::shared_ptr<HttpAppResponse> response) override {
    if (request.method != "POST")
      return refuse(
          *response,
          {405, "method_not_allowed", request.path + " takes POST (got " + request.method + ")"},
          {{"Allow", "POST"}});
    // Refused as the MCP endpoints refuse it, gate or no gate: a client's deadline is never
    // silently dropped.
    if (auto problem = util::request_timeout_error(request.header(util::kRequestTimeoutHeader)))
      return refuse(*response, {400, "validation", std::move(*problem)});
    if (is_rerank_path(request.path)) return handle_rerank(std::move(request), response);
    const bool spans = request.path == kClassifySpansPath;
    auto read = read_classify_call(request.header("content-type"), request.body, spans,
                                   service_.settings().max_text_length);
    if (auto* refusal = std::get_if<ClassifyRefusal>(&read)) return refuse(*response, *refusal);
    auto call = std::make_shared<ClassifyCall>(std::move(std::get<ClassifyCall>(read)));
    auto trace = request_spans(request);

    auto cancelled = cancellation(*response);
    std::shared_ptr<const learned::TokenClassifier> tokens;
    std::shared_ptr<const ServedClassifier> served;
    const ServedClassifier::Task* task = nullptr;  // null: classify_text's classifier
    if (spans) {
      tokens = service_.token_classifier();
      if (!tokens)
        return refuse(*response, {404, "not_found",
                                  "this server has no token_classifier: configure one to "
                                  "serve /classify/spans"});
    } else {
      served = service_.served();
      if (request.path != kClassifyPath) {
        // POST /classify/<task>: one task of a base shared by several adapters; classify_text's
        // own is answered (and counted) as /classify answers it.
        const auto name = std::string_view(request.path).substr(kClassifyTaskPrefix.size());
        if (name.empty() || name != served->task) {
          const auto found = std::find_if(served->tasks.begin(), served->tasks.end(),
                                          [&](const auto& t) { return t.name == name; });
          if (found == served->tasks.end()) return refuse(*response, unknown_task(*served, name));
          task = &*found;
        }
      }
      const auto& classifier = task ? task->classifier : served->classifier;
      if (!call->text_pairs.empty() && !classifier->takes_pairs())
        return refuse(*response,
                      {400, "validation",
                       "this server's classifier (" + classifier->kind() +
                           ") classifies one text: {text, text_pair} pairs need a sentence-pair "
                           "model (kind transformer over an NLI, fact-check or cross-encoder "
                           "checkpoint)"});
    }
    // Rules take microseconds: a thread hop would cost more than the answer (classify_text's
    // run_inline), and server.admission leaves them ungated as it does there. A span call runs a
    // model over every text: it takes its place as the span tool's calls do.
    const bool inline_rules = !spans && served->classifier->kind() == "rules";
    std::shared_ptr<util::AdmissionGate::Ticket> ticket;
    if (!inline_rules && !admit(request, *response, ticket)) return;
    if (spans) {
      const std::size_t max_length = service_.settings().max_text_length;
      return service_.executor()([service = &service_, call, tokens, response, cancelled,
                                  max_length, trace, ticket, generation = service_.generation()] {
        if (cancelled->load() || !started(ticket.get(), *response, *service)) return;
        const auto start = util::SpanRecord::now_unix_nano();
        answer(*response, [&](classify::Provenance& provenance) {
          provenance.kind = "token_classifier";
          provenance.taxonomy_id = classify::taxonomy_id(tokens->labels());
          provenance.generation = generation;
          json::array out;
          for (const auto& text : call->inputs)
            out.emplace_back(
                pipeline_spans(detect_spans(*tokens, text, call->aggregation, max_length)));
          if (ticket) ticket->succeeded();
          return call->batch ? json::value(std::move(out)) : std::move(out.front());
        });
        trace->answered(start, "token_classifier");
      });
    }
    // The service, not the app: a job still queued when the server is gone runs on the service's
    // pool, which outlives the server.
    auto work = [service = &service_, call, served, task, response, cancelled, ticket, trace] {
      if (cancelled->load() || !started(ticket.get(), *response, *service)) return;
      const auto start = util::SpanRecord::now_unix_nano();
      const auto& classifier = task ? task->classifier : served->classifier;
      answer(*response, [&](classify::Provenance& provenance) {
        provenance = task ? task->provenance : served->provenance;
        const classify::ClassifyOptions options{true, &trace->classify, trace->sink.get()};
        std::vector<classify::Classification> results;
        if (call->text_pairs.empty()) {
          std::vector<std::string_view> texts(call->inputs.begin(), call->inputs.end());
          results = classifier->classify_batch(texts, options);
        } else {
          std::vector<classify::TextPair> pairs;
          for (std::size_t i = 0; i < call->inputs.size(); ++i)
            pairs.push_back({call->inputs[i], call->text_pairs[i]});
          results = classifier->classify_pairs(pairs, options);
        }
        json::array out;
        for (const auto& c : results) {
          // The counters count classify_text's categories; another task's labels are its own.
          if (!task) service->count_classification(c);
          // A batch says cached (fallback) when any of its answers was.
          provenance.cached = provenance.cached || c.cached;
          provenance.fallback = provenance.fallback || c.fallback;
          out.emplace_back(label_scores(c, classifier->categories()));
        }
        if (ticket) ticket->succeeded();
        return call->batch ? json::value(std::move(out)) : std::move(out.front());
      });
      trace->answered(start, classifier->kind());
    };
    if (inline_rules) return work();
    service_.executor()(std::move(work));
  }

 private:
  // POST /rerank, /v1/rerank, /v2/rerank: a cross-encoder scores every document for the query
  // on the worker pool, in the admission gate's place as a classification.
  void handle_rerank(HttpAppRequest request, std::shared_ptr<HttpAppResponse> response) {
    auto read = read_rerank_call(request.header("content-type"), request.body, request.path);
    if (auto* refusal = std::get_if<ClassifyRefusal>(&read)) return refuse(*response, *refusal);
    auto call = std::make_shared<RerankCall>(std::move(std::get<RerankCall>(read)));
    auto served = service_.served();
    if (!served->classifier->reranks())
      return refuse(*response, {404, "not_found",
                                "this server's classifier (" + served->classifier->kind() +
                                    ") does not rerank: serve a cross-encoder (kind transformer "
                                    "over a checkpoint with 1 label) to answer " +
                                    request.path});
    auto trace = request_spans(request);
    auto cancelled = cancellation(*response);
    std::shared_ptr<util::AdmissionGate::Ticket> ticket;
    if (!admit(request, *response, ticket)) return;
    const RerankLimits limits{service_.settings().max_text_length,
                              service_.settings().max_rerank_documents};
    service_.executor()(
        [service = &service_, call, served, response, cancelled, ticket, trace, limits] {
          if (cancelled->load() || !started(ticket.get(), *response, *service)) return;
          const auto start = util::SpanRecord::now_unix_nano();
          answer(*response, [&](classify::Provenance& provenance) {
            provenance = served->provenance;
            const classify::ClassifyOptions options{false, &trace->classify, trace->sink.get()};
            const auto ranked = rerank(*served->classifier, call->request(), limits, options);
            if (ticket) ticket->succeeded();
            return rerank_answer(*call, ranked, served->model);
          });
          trace->answered(start, served->classifier->kind());
        });
  }

  // The request's SERVER span and its classification's, under the caller's traceparent.
  std::shared_ptr<const RequestSpans> request_spans(const HttpAppRequest& request) const {
    return std::make_shared<const RequestSpans>(
        spans_,
        util::parse_traceparent(request.header(util::kTraceparentHeader),
                                request.header(util::kTracestateHeader)),
        "POST " + request.path, RequestSpans::Attributes{{"url.path", request.path}});
  }

  // A flag the response's cancellation sets: a job still queued when its client left is dropped.
  static std::shared_ptr<std::atomic<bool>> cancellation(HttpAppResponse& response) {
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    response.on_cancel([cancelled] { cancelled->store(true); });
    return cancelled;
  }

  // A place in server.admission for the request (none when unbounded); false once it answered
  // 503 because there is none.
  bool admit(const HttpAppRequest& request, HttpAppResponse& response,
             std::shared_ptr<util::AdmissionGate::Ticket>& ticket) const {
    const auto& gate = service_.admission_gate();
    if (!gate) return true;
    auto admission =
        gate->admit(util::deadline_after_ms(request.header(util::kRequestTimeoutHeader)));
    if (!admission.ticket) {
      overloaded(response, *gate, admission.refusal);
      return false;
    }
    ticket = std::move(admission.ticket);
    return true;
  }

  // Whether the work holding `ticket` (none: ungated) may run now; answers 503 when its deadline
  // passed while it waited for its turn.
  static bool started(util::AdmissionGate::Ticket* ticket, HttpAppResponse& response,
                      const ClassificationService& service) {
    if (ticket == nullptr) return true;
    const auto why = ticket->start();
    if (why == util::AdmissionRefusal::none) return true;
    overloaded(response, *service.admission_gate(), why);
    return false;
  }

  // 503 with Retry-After at once: no place in server.admission, or the deadline passed.
  static void overloaded(HttpAppResponse& response, const util::AdmissionGate& gate,
                         util::AdmissionRefusal why) {
    refuse(response,
           why == util::AdmissionRefusal::expired
               ? ClassifyRefusal{503, "deadline_exceeded",
                                 "the request's deadline (X-Request-Timeout-Ms) passed before "
                                 "its classification could run"}
               : ClassifyRefusal{503, "overloaded",
                                 "overloaded: server.admission allows " + gate.limits_text() +
                                     "; retry later"},
           {{"Retry-After", util::retry_after_header(gate.options().retry_after)}});
  }

  // Responds with what `compute` returns, with the headers of the provenance it fills in
  // (classify::Provenance::headers()), or the error it throws: a refused text (400) or a
  // classifier that failed (500, its message).
  template <typename F>
  static void answer(HttpAppResponse& response, F&& compute) {
    try {
      classify::Provenance provenance;
      json::value body = compute(provenance);
      transport::server::HttpHeaders headers = provenance.headers();
      headers.emplace_back("Content-Type", "application/json");
      response.respond(200, std::move(headers), json::serialize(body));
    } catch (const SpanRequestError& e) {
      refuse(response, {400, "validation", e.what()});
    } catch (const RerankRequestError& e) {
      refuse(response, e.too_many() ? ClassifyRefusal{413, "payload_too_large", e.what()}
                                    : ClassifyRefusal{400, "validation", e.what()});
    } catch (const std::exception& e) {
      refuse(response, {500, "backend", std::string("classification failed: ") + e.what()});
    }
  }

  const ClassificationService& service_;
  std::shared_ptr<util::SpanSink> spans_;
};

}  // namespace

std::shared_ptr<transport::server::HttpApp> make_http_classify_app(
    const ClassificationService& service, std::shared_ptr<util::SpanSink> spans) {
  return std::make_shared<HttpClassifyApp>(service, std::move(spans));
}

}  // namespace mcpclass::service::detail
