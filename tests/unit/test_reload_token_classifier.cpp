// ClassificationService::reload and the `token_classifier` section: a reload re-reads its model
// and adds, replaces, renames or removes its tool, and a broken section refuses the whole reload.
#include "mcpclass/service/classification_service.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "session_driver.hpp"
#include "transformer_fixtures.hpp"

#include "mcpclass/config/config.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using namespace mcpclass;
using mcpclass::test::CollectingStream;
using mcpclass::test::deliver;
using mcpclass::test::initialize;
namespace json = boost::json;
using namespace std::chrono_literals;

// `tool` empty: no token_classifier section.
config::Config with_token_classifier(const std::string& model, const std::string& tool) {
  std::string text = R"(
categories:
  - {name: alpha, description: A, model: model-a}
  - {name: general, description: G, model: model-g}
classifier: {kind: rules, fallback: general, rules: {alpha: {keywords: [zebra]}}}
)";
  if (!tool.empty())
    text += fmt::format("token_classifier: {{model: \"{}\", tool: {}}}\n", model, tool);
  return config::parse_config(text);
}

std::vector<std::string> tool_names(server::Session& session) {
  auto out = std::make_shared<CollectingStream>();
  deliver(session, R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})", out);
  REQUIRE(out->wait_closed(5s));
  std::vector<std::string> names;
  for (const auto& t : out->final->at("result").at("tools").as_array())
    names.emplace_back(t.at("name").as_string());
  std::sort(names.begin(), names.end());
  return names;
}

bool tools_changed(CollectingStream& notes) {
  std::lock_guard lock(notes.mutex_);
  const bool seen = std::any_of(notes.sent.begin(), notes.sent.end(), [](const auto& m) {
    return m.at("method") == "notifications/tools/list_changed";
  });
  notes.sent.clear();
  return seen;
}

}  // namespace

TEST_CASE("reload: the token_classifier section is rebuilt, its tool added, renamed and removed") {
  const auto model = transformer_test::fixture("bert-token-f32");
  service::ClassificationService service(with_token_classifier(model, ""));
  auto session = service.server()->create_session();
  auto notes = std::make_shared<CollectingStream>();
  session->set_notification_stream(notes);
  initialize(*session);
  CHECK(service.token_classifier() == nullptr);
  CHECK(tool_names(*session) == std::vector<std::string>{"classify_text", "list_categories"});

  REQUIRE(service.reload([&] { return with_token_classifier(model, "detect_pii"); }).ok);
  const auto first = service.token_classifier();
  REQUIRE(first != nullptr);
  CHECK(tools_changed(*notes));
  CHECK(tool_names(*session) ==
        std::vector<std::string>{"classify_text", "detect_pii", "list_categories"});

  // The same section again: the model is re-read (a new object), the tool list is unchanged.
  REQUIRE(service.reload([&] { return with_token_classifier(model, "detect_pii"); }).ok);
  CHECK(service.token_classifier() != first);
  CHECK_FALSE(tools_changed(*notes));

  REQUIRE(service.reload([&] { return with_token_classifier(model, "find_spans"); }).ok);
  CHECK(tools_changed(*notes));
  CHECK(tool_names(*session) ==
        std::vector<std::string>{"classify_text", "find_spans", "list_categories"});

  // A model that does not load refuses the whole reload: the current tool keeps serving.
  const auto refused =
      service.reload([&] { return with_token_classifier("/nonexistent/model", "detect_pii"); });
  CHECK_FALSE(refused.ok);
  CHECK(refused.error.find("token_classifier.model") != std::string::npos);
  CHECK(tool_names(*session) ==
        std::vector<std::string>{"classify_text", "find_spans", "list_categories"});

  REQUIRE(service.reload([&] { return with_token_classifier(model, ""); }).ok);
  CHECK(service.token_classifier() == nullptr);
  CHECK(tool_names(*session) == std::vector<std::string>{"classify_text", "list_categories"});
}

#endif  // MCPCLASS_WITH_LEARNED
