// Several LoRA adapters over one base (issue 48, architectures::open_task_models): the base's
// encoder held once, each task's updates kept apart (kernels/low_rank.hpp), each task's head
// its own. Each task's logits against the PyTorch reference run unmerged
// (make_lora_fixtures.py) and against the same adapter merged into a model of its own; a
// ModernBERT and DeBERTa bases with adapters written here against their merged models; what
// tasks sharing one encoder cannot keep apart is refused by name.
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

namespace {

// One adapted module of a LoRA adapter written here: its name under base_model.model., in, out.
struct Adapted {
  std::string module;
  std::int64_t in, out;
};

// A PEFT LoRA adapter (bert-lora's config with `targets`) of random rank-4 updates of `modules`
// and a classifier of 3 labels over `hidden` saved whole, in a copy of bert-lora named `name`.
std::string random_adapter(const std::string& name, const json::array& targets,
                           const std::vector<Adapted>& modules, std::int64_t hidden,
                           unsigned seed) {
  const auto dir = tt::copy_of("bert-lora", name);
  auto config = json::parse(tt::read_file(dir + "/adapter_config.json")).as_object();
  config["target_modules"] = targets;
  config["modules_to_save"] = json::array{"classifier"};
  tt::write_file(dir + "/adapter_config.json", json::serialize(config));
  checkpoint::SafeTensors file;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  auto random = [&](std::vector<std::int64_t> shape) {
    checkpoint::SafeTensor t{shape, std::vector<float>(static_cast<std::size_t>(
                                        shape.size() == 1 ? shape[0] : shape[0] * shape[1]))};
    for (auto& v : t.values) v = normal(rng);
    return t;
  };
  const std::int64_t r = 4;
  for (const auto& m : modules) {
    file.tensors["base_model.model." + m.module + ".lora_A.weight"] = random({r, m.in});
    file.tensors["base_model.model." + m.module + ".lora_B.weight"] = random({m.out, r});
  }
  file.tensors["base_model.model.classifier.weight"] = random({3, hidden});
  file.tensors["base_model.model.classifier.bias"] = random({3});
  learned::detail::write_safetensors(dir + "/adapter_model.safetensors", file);
  return dir;
}

// The task of `adapter` over `base` against the same adapter merged into a model of its own.
void check_task_as_merged(const std::string& base, const std::string& adapter,
                          const std::string& what) {
  const auto models = open_task_models(base, {{"task", adapter}});
  const auto got = logits_of(*models[0], base);
  const auto merged = logits_of(*open_sequence_model(base, adapter), base);
  const double apart = tt::max_abs_difference(got, merged);
  MESSAGE(what << " task: max |logit − merged alone| = " << apart);
  CHECK(apart <= 1e-4);
  CHECK(tt::max_abs_difference(got, logits_of(*open_sequence_model(base), base)) > 0.1);
}

}  // namespace

TEST_CASE("transformers.tasks: a ModernBERT base shares its encoder with an adapter's task") {
  const std::int64_t h = 64, intermediate = 96;
  std::vector<Adapted> modules;
  for (int layer = 0; layer < 4; ++layer) {
    const std::string m = "model.layers." + std::to_string(layer) + ".";
    modules.push_back({m + "attn.Wqkv", h, 3 * h});
    modules.push_back({m + "attn.Wo", h, h});
    modules.push_back({m + "mlp.Wi", h, 2 * intermediate});
    modules.push_back({m + "mlp.Wo", intermediate, h});
  }
  const auto dir =
      random_adapter("task-modernbert", json::array{"Wqkv", "Wo", "Wi"}, modules, h, 48);
  check_task_as_merged(tt::fixture("modernbert-f32"), dir, "ModernBERT");
  std::filesystem::remove_all(dir);
}

// DeBERTa-v3 (share_att_key: the relative positions go through the adapted query and key
// projections, which a task projects its own way) and DeBERTa-v2 (pos_key_proj and
// pos_query_proj of their own, which an adapter leaves alone); the pooler adapted too.
TEST_CASE("transformers.tasks: DeBERTa-v2 and -v3 bases share their encoder with a task") {
  const std::int64_t h = 64, intermediate = 128;
  for (const std::string fixture : {"deberta-v3-f32", "deberta-v2-f32"}) {
    CAPTURE(fixture);
    std::vector<Adapted> modules{{"pooler.dense", h, h}};
    for (int layer = 0; layer < 2; ++layer) {
      const std::string m = "deberta.encoder.layer." + std::to_string(layer) + ".";
      for (const auto* proj : {"query_proj", "key_proj", "value_proj"})
        modules.push_back({m + "attention.self." + proj, h, h});
      modules.push_back({m + "attention.output.dense", h, h});
      modules.push_back({m + "intermediate.dense", h, intermediate});
      modules.push_back({m + "output.dense", intermediate, h});
    }
    const auto dir = random_adapter("task-" + fixture,
                                    json::array{"query_proj", "key_proj", "value_proj", "dense"},
                                    modules, h, 49);
    check_task_as_merged(tt::fixture(fixture), dir, fixture);
    // A task adapting only the values keeps the base's projections of the positions.
    const auto values =
        random_adapter("task-values-" + fixture, json::array{"value_proj"},
                       {{"deberta.encoder.layer.0.attention.self.value_proj", h, h}}, h, 50);
    const auto models = open_task_models(tt::fixture(fixture), {{"task", dir}, {"v", values}});
    CHECK(models[1]->describe().at("lora_parameters").to_number<std::size_t>() ==
          static_cast<std::size_t>(4 * h + h * 4));
    check_task_as_merged(tt::fixture(fixture), values, fixture + " values");
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(values);
  }
}

TEST_CASE("transformers.tasks: what tasks sharing one encoder cannot keep apart is refused") {
  const auto base = tt::fixture("bert-f32");
  // bias "all": the adapted modules' biases saved whole, tensors of the shared encoder.
  CHECK(task_error(base, {{"a", tt::fixture("bert-lora")}, {"b", tt::fixture("bert-lora-rslora")}})
            .find("saves 'bert.encoder.layer.0.attention.self.query.bias' whole, a tensor of the "
                  "encoder the tasks share") != std::string::npos);
  CHECK(task_error(tt::fixture("mmbert-token-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("cannot share one base among several adapters yet") != std::string::npos);
  // An adapter of another base: its modules are not this base's.
  CHECK(task_error(tt::fixture("modernbert-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("adapts 'bert.embeddings.word_embeddings.weight'") == std::string::npos);
  CHECK(task_error(tt::fixture("modernbert-f32"), {{"a", tt::fixture("bert-lora")}})
            .find("' does not have") != std::string::npos);
}

#endif  // MCPCLASS_WITH_LEARNED
