// The engine's precisions and kernel sets on the PyTorch reference fixtures of tests/transformers:
// int8 (weights per output channel at load, activations per row at run time) keeps every clear
// argmax and its probabilities within 0.08 of the float32 reference, gives the same bits on every
// kernel set this CPU runs and for a batch as for its texts one by one; the classifier says what it
// computes with, and refuses a precision or kernel set this CPU cannot run, by name.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/bert/bert_model.hpp"
#include "architectures/modernbert/modernbert_model.hpp"
#include "kernels/cpu_features.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

using namespace mcpclass;
using mcpclass::architectures::BertSequenceModel;
using mcpclass::architectures::ModernBertModel;
using mcpclass::classify::ClassifyError;
using mcpclass::kernels::Compute;
using mcpclass::kernels::KernelSet;
using mcpclass::kernels::Precision;
namespace tt = transformer_test;

namespace {

std::vector<KernelSet> runnable_sets() {
  const auto features = kernels::detect_cpu_features();
  std::vector<KernelSet> sets;
  for (auto set : {KernelSet::portable, KernelSet::avx2, KernelSet::avx2_vnni, KernelSet::avx512,
                   KernelSet::avx512_vnni})
    if (kernels::supports(features, set)) sets.push_back(set);
  return sets;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// `Model` of fixture `name` in int8 on every kernel set: each against the float32 reference of
// `reference_file`'s `model_key`, and all the same bits.
template <class Model>
void check_int8(const std::string& name, const std::string& reference_file,
                const std::string& model_key, std::size_t max_tokens) {
  const auto ref = tt::reference(reference_file).at("models").at(model_key).as_object();
  const auto dir = tt::fixture(name);
  std::vector<float> first;
  for (const auto set : runnable_sets()) {
    CAPTURE(std::string(kernels::name(set)));
    const Model model(dir, {}, {}, Compute{set, Precision::int8});
    const auto r = tt::run_reference_texts(model, dir, max_tokens, reference_file);
    CHECK(r.ids == tt::reference_ids(ref));
    if (first.empty()) {
      first = r.logits;
      const auto want = tt::reference_logits(ref);
      const std::size_t labels = want.size() / r.ids.size();
      const auto gap = tt::probability_gap(r.logits, want, labels);
      MESSAGE(name << " int8: max |p − reference p| = " << gap.worst << ", argmax differs "
                   << gap.argmax_differs);
      // Random weights at hidden 32 give near ties an int8 rounding may flip: the argmax must
      // hold wherever the reference's two likeliest labels are 0.1 apart. (The 0.05 and
      // 99% are judged on a trained model: bench/accuracy/precision_accuracy.py.)
      CHECK(gap.worst <= 0.08);
      for (std::size_t t = 0; t < r.ids.size(); ++t) {
        const auto p = tt::softmax(std::span(want.data() + t * labels, labels));
        const auto q = tt::softmax(std::span(r.logits.data() + t * labels, labels));
        auto sorted = p;
        std::sort(sorted.rbegin(), sorted.rend());
        if (labels > 1 && sorted[0] - sorted[1] > 0.1) {
          CAPTURE(t);
          CHECK(std::max_element(q.begin(), q.end()) - q.begin() ==
                std::max_element(p.begin(), p.end()) - p.begin());
        }
      }
    } else {
      CHECK(same_bits(r.logits, first));
    }
  }
}

}  // namespace

TEST_CASE("transformers.int8.bert_and_roberta_match_the_reference_on_every_kernel_set") {
  check_int8<BertSequenceModel>("bert-f32", "reference.json", "bert", 64);
  check_int8<BertSequenceModel>("roberta-f32", "reference.json", "roberta", 64);
}

TEST_CASE("transformers.int8.modernbert_and_mmbert_match_the_reference_on_every_kernel_set") {
  check_int8<ModernBertModel>("modernbert-f32", "modernbert-reference.json", "modernbert", 64);
  check_int8<ModernBertModel>("mmbert-f32", "modernbert-reference.json", "mmbert", 64);
}

TEST_CASE("transformers.int8.mixed_batch_equals_one_by_one") {
  const auto dir = tt::fixture("bert-f32");
  const BertSequenceModel model(dir, {}, {}, Compute{runnable_sets().back(), Precision::int8});
  const auto batch = tt::run_reference_texts(model, dir, 60);
  const std::size_t labels = batch.logits.size() / batch.ids.size();
  for (std::size_t i = 0; i < batch.ids.size(); ++i) {
    const std::vector<architectures::BertInput> one{{batch.ids[i], {}}};
    const auto alone = model.logits(one, 2);
    CHECK(std::memcmp(alone.data(), batch.logits.data() + i * labels, labels * sizeof(float)) == 0);
  }
}

TEST_CASE("transformers.precision: the classifier says what it computes with, refuses by name") {
  const auto dir = tt::fixture("bert-f32");
  auto config_for = [&](const char* precision, const char* kernel_set) {
    boost::json::object c{{"kind", "transformer"}, {"model", dir}, {"precision", precision}};
    if (kernel_set != nullptr) c["kernels"] = kernel_set;
    return config::config_from_json(boost::json::object{{"classifier", c}});
  };
  const auto int8 = config::make_classifier(config_for("int8", "portable"));
  CHECK(int8->info().at("precision") == "int8");
  CHECK(int8->info().at("kernels") == "portable");
  const auto f32 = config::make_classifier(config_for("auto", nullptr));
  CHECK(f32->info().at("precision") == "f32");
  const std::string best(
      kernels::name(kernels::choose_kernel_set(kernels::detect_cpu_features(), "")));
  CHECK(f32->info().at("kernels").as_string() == best);
  CHECK(int8->classify("What is the derivative of x squared?").category ==
        f32->classify("What is the derivative of x squared?").category);
  CHECK_THROWS_WITH_AS(config::make_classifier(config_for("f32", "avx9")),
                       doctest::Contains("unknown kernel set \"avx9\""), ClassifyError);
  const auto features = kernels::detect_cpu_features();
  if (!features.avx512_bf16)
    CHECK_THROWS_WITH_AS(
        config::make_classifier(config_for("bf16", nullptr)),
        doctest::Contains("precision bf16 needs avx512_bf16, which this CPU lacks"), ClassifyError);
  if (!features.avx512f)
    CHECK_THROWS_WITH_AS(config::make_classifier(config_for("f32", "avx512")),
                         doctest::Contains("needs avx512f avx512bw avx512vl"), ClassifyError);
}

#endif  // MCPCLASS_WITH_LEARNED
