// The engine's precisions and kernel sets on the PyTorch reference fixtures of tests/transformers:
// int8 (weights per output channel at load, activations per row at run time) keeps every clear
// argmax and its probabilities within 0.08 of the float32 reference, bf16 within 0.02; each gives
// the same bits on every kernel set this CPU runs (bf16: the portable tile, and the AVX-512 BF16
// one where the CPU has it) and for a batch as for its texts one by one; the classifier says what
// it computes with, and refuses a precision or kernel set this CPU cannot run, by name.
#include "kernel_test_values.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/bert/bert_model.hpp"
#include "architectures/deberta/deberta_model.hpp"
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
using kernel_test::same_bits;

namespace {

std::vector<KernelSet> runnable_sets() {
  return kernels::runnable_kernel_sets(kernels::detect_cpu_features());
}

// The kernel sets that compute `precision`: int8 runs on every set; bf16 has three tiles, the
// portable one, vdpbf16ps (set avx512_bf16) and AMX's (set amx), which the sets below
// avx512_bf16 fall back from.
std::vector<KernelSet> sets_for(Precision precision) {
  auto sets = runnable_sets();
  if (precision == Precision::bf16)
    std::erase_if(sets, [](KernelSet s) {
      return s != KernelSet::portable && s != KernelSet::avx512_bf16 && s != KernelSet::amx;
    });
  return sets;
}

// `Model` of fixture `name` in `precision` on every kernel set: each against the float32
// reference of `reference_file`'s `model_key` (probabilities within `max_gap`), and all the
// same bits.
template <class Model>
void check_precision(Precision precision, double max_gap, const std::string& name,
                     const std::string& reference_file, const std::string& model_key,
                     std::size_t max_tokens) {
  const auto ref = tt::reference(reference_file).at("models").at(model_key).as_object();
  const auto dir = tt::fixture(name);
  std::vector<float> first;
  for (const auto set : sets_for(precision)) {
    CAPTURE(std::string(kernels::name(set)));
    const Model model(dir, {}, {}, Compute{set, precision});
    const auto r = tt::run_reference_texts(model, dir, max_tokens, reference_file);
    CHECK(r.ids == tt::reference_ids(ref));
    if (first.empty()) {
      first = r.logits;
      const auto want = tt::reference_logits(ref);
      const std::size_t labels = want.size() / r.ids.size();
      const auto gap = tt::probability_gap(r.logits, want, labels);
      MESSAGE(name << " " << std::string(kernels::name(precision)) << ": max |p − reference p| = "
                   << gap.worst << ", argmax differs " << gap.argmax_differs);
      // Random weights at hidden 32 give near ties a rounding may flip: the argmax must hold
      // wherever the reference's two likeliest labels are 0.1 apart. (The bounds are
      // judged on a trained model: bench/accuracy/precision_accuracy.py.)
      CHECK(gap.worst <= max_gap);
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
    } else if (precision == Precision::bf16 && set == KernelSet::amx) {
      // AMX's unit orders each pair's additions its own way (bf16gemm_amx.cpp): the bound
      // against the reference, not the portable bits.
      const auto want = tt::reference_logits(ref);
      CHECK(tt::probability_gap(r.logits, want, want.size() / r.ids.size()).worst <= max_gap);
    } else {
      CHECK(same_bits(r.logits, first));
    }
  }
}

// Every reference fixture of tests/transformers in `precision`, probabilities within `max_gap`.
void check_every_fixture(Precision precision, double max_gap) {
  check_precision<BertSequenceModel>(precision, max_gap, "bert-f32", "reference.json", "bert", 64);
  check_precision<BertSequenceModel>(precision, max_gap, "roberta-f32", "reference.json", "roberta",
                                     64);
  check_precision<ModernBertModel>(precision, max_gap, "modernbert-f32",
                                   "modernbert-reference.json", "modernbert", 64);
  check_precision<ModernBertModel>(precision, max_gap, "mmbert-f32", "modernbert-reference.json",
                                   "mmbert", 64);
  check_precision<architectures::DebertaModel>(precision, max_gap, "deberta-v3-f32",
                                               "deberta-reference.json", "deberta-v3", 64);
  check_precision<architectures::DebertaModel>(precision, max_gap, "deberta-v2-f32",
                                               "deberta-reference.json", "deberta-v2", 64);
}

}  // namespace

TEST_CASE("transformers.int8: BERT, RoBERTa, ModernBERT, mmBERT and DeBERTa on every kernel set") {
  check_every_fixture(Precision::int8, 0.08);
}

TEST_CASE("transformers.bf16: BERT, RoBERTa, ModernBERT, mmBERT and DeBERTa on every kernel set") {
  check_every_fixture(Precision::bf16, 0.02);
}

TEST_CASE("transformers.int8_and_bf16.mixed_batch_equals_one_by_one") {
  const auto dir = tt::fixture("bert-f32");
  for (const auto precision : {Precision::int8, Precision::bf16}) {
    CAPTURE(std::string(kernels::name(precision)));
    const BertSequenceModel model(dir, {}, {}, Compute{sets_for(precision).back(), precision});
    const auto batch = tt::run_reference_texts(model, dir, 60);
    const std::size_t labels = batch.logits.size() / batch.ids.size();
    for (std::size_t i = 0; i < batch.ids.size(); ++i) {
      const std::vector<architectures::BertInput> one{{batch.ids[i], {}}};
      const auto alone = model.logits(one, 2);
      CHECK(std::memcmp(alone.data(), batch.logits.data() + i * labels, labels * sizeof(float)) ==
            0);
    }
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
  if (!features.avx512_bf16) {
    CHECK_THROWS_WITH_AS(
        config::make_classifier(config_for("bf16", nullptr)),
        doctest::Contains("precision bf16 needs avx512_bf16, which this CPU lacks"), ClassifyError);
  } else if (kernels::parse_kernel_set(best) < KernelSet::avx512_bf16) {  // capped lower
    CHECK_THROWS_WITH_AS(config::make_classifier(config_for("bf16", nullptr)),
                         doctest::Contains("precision bf16 needs kernel set avx512_bf16"),
                         ClassifyError);
  } else {
    const auto bf16 = config::make_classifier(config_for("bf16", nullptr));
    CHECK(bf16->info().at("precision") == "bf16");
    CHECK(bf16->info().at("kernels").as_string() == best);
    CHECK_THROWS_WITH_AS(config::make_classifier(config_for("bf16", "avx512_vnni")),
                         doctest::Contains("precision bf16 needs kernel set avx512_bf16"),
                         ClassifyError);
  }
  if (!features.avx512f)
    CHECK_THROWS_WITH_AS(config::make_classifier(config_for("f32", "avx512")),
                         doctest::Contains("needs avx512f avx512bw avx512vl"), ClassifyError);
}

#endif  // MCPCLASS_WITH_LEARNED
