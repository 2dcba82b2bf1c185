// Several LoRA adapters over one base (issue 48, architectures::open_task_models): the base's
// encoder held once, each task's updates kept apart (kernels/low_rank.hpp), each task's head
// its own. Each task's logits against the PyTorch reference run unmerged
// (make_lora_fixtures.py) and against the same adapter merged into a model of its own; a
// ModernBERT base with an adapter written here against its merged model; what tasks sharing one
// encoder cannot keep apart is refused by name.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/common/sequence_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/errors.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace mcpclass;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

std::vector<float> logits_of(const SequenceModel& model, const std::string& dir) {
  return tt::run_reference_texts(model, dir, model.max_tokens()).logits;
}

std::string task_error(const std::string& base, const std::vector<TaskAdapter>& tasks) {
  try {
    open_task_models(base, tasks);
  } catch (const classify::ClassifyError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("transformers.tasks: three adapters over one BERT base, each as merged alone") {
  const auto base = tt::fixture("bert-f32");
  const std::vector<TaskAdapter> tasks{{"intent", tt::fixture("bert-lora")},
                                       {"jailbreak", tt::fixture("bert-lora-jailbreak")},
                                       {"topic", tt::fixture("bert-lora-topic")}};
  const auto models = open_task_models(base, tasks);
  REQUIRE(models.size() == 3);
  const auto reference = json::parse(tt::read_file(tt::fixture("lora_reference.json"))).as_object();
  const auto plain = logits_of(*open_sequence_model(base), base);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string name = tasks[i].name;
    CAPTURE(name);
    const auto got = logits_of(*models[i], base);
    const auto fixture = std::filesystem::path(tasks[i].adapter_dir).filename().string();
    const auto want = tt::reference_logits(reference.at("models").at(fixture).as_object());
    const double gap = tt::max_abs_difference(got, want);
    const auto merged = logits_of(*open_sequence_model(base, tasks[i].adapter_dir), base);
    const double apart = tt::max_abs_difference(got, merged);
    MESSAGE(name << ": max |logit − unmerged reference| = " << gap
                 << ", − merged alone = " << apart);
    CHECK(gap <= 1e-4);
    CHECK(apart <= 1e-4);
    CHECK(tt::max_abs_difference(got, plain) > 0.1);  // the task's adapter is applied
  }
  // The tasks share the encoder: the adapters' updates and heads are all each adds.
  const auto& shared = models[0]->describe();
  CHECK(shared.at("parameters").to_number<std::size_t>() > 0);
}

TEST_CASE("transformers.tasks: a task's labels from its adapter directory's config.json") {
  const auto dir = tt::copy_of("bert-lora-jailbreak", "task-labels");
  tt::write_file(dir + "/config.json",
                 R"({"id2label": {"0": "benign", "1": "jailbreak", "2": "injection"}})");
  const auto models = open_task_models(tt::fixture("bert-f32"),
                                       {{"intent", tt::fixture("bert-lora")}, {"guard", dir}});
  CHECK(models[0]->labels() == std::vector<std::string>{"code", "math", "chat"});
  CHECK(models[1]->labels() == std::vector<std::string>{"benign", "jailbreak", "injection"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("transformers.tasks: a ModernBERT base shares its encoder with an adapter's task") {
  const auto base = tt::fixture("modernbert-f32");
  const auto dir = tt::copy_of("bert-lora", "task-modernbert");
  auto config = json::parse(tt::read_file(dir + "/adapter_config.json")).as_object();
  config["target_modules"] = json::array{"Wqkv", "Wo", "Wi"};
  config["modules_to_save"] = json::array{"classifier"};
  tt::write_file(dir + "/adapter_config.json", json::serialize(config));
  checkpoint::SafeTensors file;
  std::mt19937 rng(48);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  auto random = [&](std::int64_t rows, std::int64_t cols) {
    checkpoint::SafeTensor t{{rows, cols}, std::vector<float>(rows * cols)};
    for (auto& v : t.values) v = normal(rng);
    return t;
  };
  const std::int64_t h = 64, intermediate = 96, r = 4;
  for (int layer = 0; layer < 4; ++layer) {
    const std::string m = "base_model.model.model.layers." + std::to_string(layer) + ".";
    for (const auto& [module, in, out] :
         {std::tuple{"attn.Wqkv", h, 3 * h}, std::tuple{"attn.Wo", h, h},
          std::tuple{"mlp.Wi", h, 2 * intermediate}, std::tuple{"mlp.Wo", intermediate, h}}) {
      file.tensors[m + module + ".lora_A.weight"] = random(r, in);
      file.tensors[m + module + ".lora_B.weight"] = random(out, r);
    }
  }
  file.tensors["base_model.model.classifier.weight"] = random(3, h);
  file.tensors["base_model.model.classifier.bias"] = random(1, 3);
  file.tensors["base_model.model.classifier.bias"].shape = {3};
  learned::detail::write_safetensors(dir + "/adapter_model.safetensors", file);
  const auto models = open_task_models(base, {{"task", dir}});
  const auto got = logits_of(*models[0], base);
  const auto merged = logits_of(*open_sequence_model(base, dir), base);
  const double apart = tt::max_abs_difference(got, merged);
  MESSAGE("ModernBERT task: max |logit − merged alone| = " << apart);
  CHECK(apart <= 1e-4);
  CHECK(tt::max_abs_difference(got, logits_of(*open_sequence_model(base), base)) > 0.1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("transformers.tasks: what tasks sharing one encoder cannot keep apart is refused") {
  const auto base = tt::fixture("bert-f32");
  // bias "all": the adapted modules' biases saved whole, tensors of the shared encoder.
  CHECK(task_error(base, {{"a", tt::fixture("bert-lora")}, {"b", tt::fixture("bert-lora-rslora")}})
            .find("saves 'bert.encoder.layer.0.attention.self.query.bias' whole, a tensor of the "
                  "encoder the tasks share") != std::string::npos);
  CHECK(task_error(tt::fixture("deberta-v3-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("cannot share one base among several adapters yet") != std::string::npos);
  // An adapter of another base: its modules are not this base's.
  CHECK(task_error(tt::fixture("modernbert-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("adapts 'bert.embeddings.word_embeddings.weight'") == std::string::npos);
  CHECK(task_error(tt::fixture("modernbert-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("' does not have") != std::string::npos);
}

#endif  // MCPCLASS_WITH_LEARNED
