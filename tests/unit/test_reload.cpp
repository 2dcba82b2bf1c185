// ClassificationService::reload: the swap is atomic per call, refused configurations change
// nothing, and sessions hear about what changed (and only that).
#include "session_driver.hpp"

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/service/classification_service.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

namespace {

using namespace mcpclass;
using mcpclass::test::CollectingStream;
using mcpclass::test::deliver;
using mcpclass::test::initialize;
namespace json = boost::json;
using namespace std::chrono_literals;

std::string document(std::string_view alpha_model, std::string_view second = "general") {
  return fmt::format(R"(
categories:
  - {{name: alpha, description: A, system_prompt: "You are alpha.", model: {}}}
  - {{name: {}, description: G, system_prompt: "You are {}.", model: model-g}}
classifier: {{kind: rules, fallback: {}, rules: {{alpha: {{keywords: [zebra]}}}}}}
)",
                     alpha_model, second, second, second);
}

json::object call(server::Session& session, std::string_view text) {
  static std::atomic<int> next_id{1};  // ids must differ while calls overlap
  auto out = std::make_shared<CollectingStream>();
  deliver(session,
          json::serialize(
              json::object{{"jsonrpc", "2.0"},
                           {"id", next_id++},
                           {"method", "tools/call"},
                           {"params", json::object{{"name", "classify_text"},
                                                   {"arguments", json::object{{"text", text}}}}}}),
          out);
  REQUIRE(out->wait_closed(5s));
  REQUIRE(out->final);
  return out->final->at("result").at("structuredContent").as_object();
}

std::vector<std::string> methods(CollectingStream& stream) {
  std::lock_guard lock(stream.mutex_);
  std::vector<std::string> out;
  for (const auto& m : stream.sent) out.emplace_back(m.at("method").as_string());
  stream.sent.clear();
  return out;
}

// Blocks every classify() until released: a call that is in flight while a reload happens.
class GateClassifier final : public classify::Classifier {
 public:
  explicit GateClassifier(std::shared_ptr<const classify::Classifier> inner)
      : inner_(std::move(inner)) {}
  const classify::CategorySet& categories() const override { return inner_->categories(); }
  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions& options) const override {
    std::unique_lock lock(mutex_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    return inner_->classify(text, options);
  }
  std::string kind() const override { return "gate"; }
  json::object info() const override { return inner_->info(); }
  void wait_entered() const {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return entered_; });
  }
  void open() const {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<const classify::Classifier> inner_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable bool entered_ = false;
  mutable bool open_ = false;
};

}  // namespace

TEST_CASE("reload: a new routing takes effect for later calls, silently") {
  service::ClassificationService service(config::parse_config(document("model-a")));
  auto session = service.server()->create_session();
  auto notes = std::make_shared<CollectingStream>();
  session->set_notification_stream(notes);
  initialize(*session);
  CHECK(call(*session, "zebra").at("model") == "model-a");
  const auto result = service.reload([] { return config::parse_config(document("model-b")); });
  CHECK(result.ok);
  CHECK(result.generation == 2);
  CHECK(call(*session, "zebra").at("model") == "model-b");
  // Same categories: the tool, prompt and resource definitions did not change.
  CHECK(methods(*notes).empty());
  CHECK(service.prometheus().find("mcpclass_config_generation 2\n") != std::string::npos);
}

TEST_CASE("reload: a refused configuration is counted and the current classifier keeps serving") {
  service::ClassificationService service(config::parse_config(document("model-a")));
  auto session = service.server()->create_session();
  initialize(*session);
  const auto bad = service.reload([] { return config::parse_config("classifier: {kind: bogus}"); });
  CHECK_FALSE(bad.ok);
  CHECK(bad.generation == 1);
  CHECK(bad.error.find("classifier.kind") != std::string::npos);
  const auto unreadable =
      service.reload([] { return config::load_config_file("/nonexistent/mcpclass.yaml"); });
  CHECK_FALSE(unreadable.ok);
  CHECK(call(*session, "zebra").at("model") == "model-a");
  CHECK(service.generation() == 1);
  CHECK(service.prometheus().find("mcpclass_config_reload_failures_total 2\n") !=
        std::string::npos);
}

TEST_CASE("reload: new categories are announced: tools, prompts, the subscribed resource") {
  service::ClassificationService service(config::parse_config(document("model-a")));
  auto session = service.server()->create_session();
  auto notes = std::make_shared<CollectingStream>();
  session->set_notification_stream(notes);
  initialize(*session);
  auto sub = std::make_shared<CollectingStream>();
  deliver(
      *session,
      R"({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"mcpclass://categories"}})",
      sub);
  REQUIRE(sub->wait_closed(5s));
  REQUIRE(service.reload([] { return config::parse_config(document("model-a", "misc")); }).ok);
  const auto seen = methods(*notes);
  CHECK(std::count(seen.begin(), seen.end(), "notifications/tools/list_changed") == 1);
  CHECK(std::count(seen.begin(), seen.end(), "notifications/prompts/list_changed") >= 1);
  CHECK(std::count(seen.begin(), seen.end(), "notifications/resources/updated") == 1);
  // The old category's prompt is gone, the new one is there.
  auto prompts = std::make_shared<CollectingStream>();
  deliver(*session, R"({"jsonrpc":"2.0","id":4,"method":"prompts/list"})", prompts);
  REQUIRE(prompts->wait_closed(5s));
  std::vector<std::string> names;
  for (const auto& p : prompts->final->at("result").at("prompts").as_array())
    names.emplace_back(p.at("name").as_string());
  CHECK(names == std::vector<std::string>{"alpha", "misc"});
  CHECK(call(*session, "nothing in particular").at("class") == 1);
}

TEST_CASE("reload: a call in flight finishes on the classifier it started with") {
  const auto first = config::parse_config(document("model-a"));
  auto gate = std::make_shared<GateClassifier>(config::make_classifier(first));
  service::ClassificationService service(first, gate);
  auto session = service.server()->create_session();
  initialize(*session);
  auto in_flight = std::async(std::launch::async, [&] { return call(*session, "zebra"); });
  gate->wait_entered();
  REQUIRE(service.reload([] { return config::parse_config(document("model-b")); }).ok);
  CHECK(call(*session, "zebra").at("model") == "model-b");  // not held up by the gate
  gate->open();
  CHECK(in_flight.get().at("model") == "model-a");
}

TEST_CASE("reload: a front end's stage is swapped in with the classifier, or refuses the reload") {
  service::ClassificationService service(config::parse_config(document("model-a")));
  auto session = service.server()->create_session();
  initialize(*session);
  std::string staged;  // what the stage built, then swapped in
  std::string swapped;
  auto stage = [&](const config::Config& next, const service::ServedClassifier& served) {
    if (next.categories.find("broken") != nullptr) throw config::ConfigError("route", "refused");
    staged = served.classifier->classify("zebra").model;
    return std::function<void()>([&] { swapped = staged; });
  };
  const auto ok = service.reload([] { return config::parse_config(document("model-b")); }, stage);
  CHECK(ok.ok);
  CHECK(swapped == "model-b");
  const auto refused =
      service.reload([] { return config::parse_config(document("model-c", "broken")); }, stage);
  CHECK_FALSE(refused.ok);
  CHECK(refused.error.find("route: refused") != std::string::npos);
  CHECK(swapped == "model-b");  // built, never swapped in
  CHECK(call(*session, "zebra").at("model") == "model-b");
  CHECK(service.generation() == 2);
  CHECK(service.prometheus().find("mcpclass_config_reload_failures_total 1\n") !=
        std::string::npos);
}
