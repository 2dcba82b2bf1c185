// The converted USE-lite TorchScript encoder against vectors from the original TF.js model.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "kernels/blas_threads.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "test_learned_support.hpp"

#include <cmath>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;

namespace {

std::shared_ptr<const SentenceEncoder> use_lite(std::size_t threads = 1,
                                                const std::string& file = "encoder.pt") {
  const auto dir = learned_test::model_dir();
  return load_sentence_encoder({dir + "/" + file, dir + "/tokenizer.model", 128, 32, threads});
}

struct Reference {
  std::vector<std::string> texts;
  std::vector<std::vector<double>> vectors;
};

Reference reference_vectors() {
  Reference r;
  const auto doc = learned_test::reference();
  for (const auto& item : doc.at("items").as_array()) {
    r.texts.emplace_back(item.at("text").as_string());
    r.vectors.emplace_back();
    for (const auto& v : item.at("embedding").as_array())
      r.vectors.back().push_back(v.to_number<double>());
  }
  REQUIRE(r.texts.size() >= 8);
  return r;
}

// How one 512-d row agrees with its TF.js reference vector.
struct Agreement {
  double worst = 0.0;   ///< Largest absolute difference.
  double cosine = 0.0;  ///< Dot product (both are unit vectors).
  double norm = 0.0;    ///< Squared norm of the row.
};

Agreement agreement(const float* row, const std::vector<double>& reference) {
  Agreement a;
  for (std::size_t d = 0; d < 512; ++d) {
    a.worst = std::max(a.worst, std::abs(row[d] - reference[d]));
    a.cosine += row[d] * reference[d];
    a.norm += static_cast<double>(row[d]) * row[d];
  }
  return a;
}

}  // namespace

TEST_CASE("encoder: USE-lite matches TF.js to float precision (single and batched)") {
  const auto enc = use_lite();
  CHECK(enc->dimension() == 512);
  const auto [texts, expected] = reference_vectors();
  const auto batch = enc->encode(texts);  // mixed lengths: padding must not change any row
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(texts[i]);
    const auto single = enc->encode(std::span(&texts[i], 1));
    const auto one = agreement(single.data(), expected[i]);
    const auto batched = agreement(batch.data() + i * 512, expected[i]);
    CHECK(one.worst < 2e-6);  // TF.js (wasm, float32) vs libtorch (float32): ~3e-7 typical
    CHECK(batched.worst < 2e-6);
    CHECK(one.norm == doctest::Approx(1.0).epsilon(1e-5));
  }
  // The long text (224 tokens) is truncated to 128, as the TF.js graph does.
  CHECK(enc->token_ids(texts.back()).size() == 128);
}

TEST_CASE("encoder: the bfloat16 USE-lite variant stays within its rounding tolerance") {
  // Linear weights and their inputs rounded to bfloat16 (8-bit mantissa): not bit-exact, but
  // every reference vector must point the same way as TF.js's.
  const auto enc = use_lite(1, "encoder-bf16.pt");
  CHECK(enc->dimension() == 512);
  const auto [texts, expected] = reference_vectors();
  const auto batch = enc->encode(texts);
  // libtorch's bfloat16 matmuls on a CPU without AVX-512 round more on the way (measured on an
  // AVX2 machine: cosine >= 0.99880, worst element 0.0098; with AVX-512: >= 0.99996, 0.0018).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  const double min_cosine = avx512 ? 0.9999 : 0.998, max_worst = avx512 ? 0.005 : 0.02;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(texts[i]);
    const auto single = enc->encode(std::span(&texts[i], 1));
    const auto one = agreement(single.data(), expected[i]);
    const auto batched = agreement(batch.data() + i * 512, expected[i]);
    CHECK(one.cosine > min_cosine);
    CHECK(batched.cosine > min_cosine);
    CHECK(one.worst < max_worst);
  }
  // Tokenised once, encoded from ids: the same vectors as from the texts, and deterministic.
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& t : texts) ids.push_back(enc->token_ids(t));
  CHECK(enc->encode_tokens(ids) == batch);
}

TEST_CASE("encoder: the threads option also sets OpenBLAS's thread count") {
  use_lite(2);
  // OpenBLAS arrives with the libtorch plugin: Debian's libtorch runs on it (install-deps.sh).
  REQUIRE(mcpclass::kernels::blas_threads() > 0);
  CHECK(mcpclass::kernels::blas_threads() == 2);
  use_lite(1);
  CHECK(mcpclass::kernels::blas_threads() == 1);
}

TEST_CASE("encoder: semantic sanity and determinism") {
  const auto enc = use_lite();
  const std::vector<std::string> t{"How do I sort a list in Python?",
                                   "Sorting an array in JavaScript",
                                   "The French Revolution began in 1789."};
  const auto v = enc->encode(t);
  auto dot = [&](std::size_t a, std::size_t b) {
    double s = 0;
    for (std::size_t d = 0; d < 512; ++d) s += static_cast<double>(v[a * 512 + d]) * v[b * 512 + d];
    return s;
  };
  CHECK(dot(0, 1) > dot(0, 2) + 0.2);
  CHECK(enc->encode(t) == v);
}

TEST_CASE("encoder: bad model files give a clear error, not a crash") {
  const auto dir = learned_test::model_dir();
  const auto tmp = learned_test::temp_dir("encoder");
  {
    std::ofstream out(tmp + "/garbage.pt", std::ios::binary);
    out << "PK\x03\x04 definitely not a TorchScript archive";
  }
  CHECK_THROWS_WITH_AS(
      load_sentence_encoder({tmp + "/garbage.pt", dir + "/tokenizer.model"}),
      doctest::Contains(("cannot load sentence encoder '" + tmp + "/garbage.pt'").c_str()),
      ClassifyError);
  CHECK_THROWS_WITH_AS(load_sentence_encoder({tmp + "/missing.pt", dir + "/tokenizer.model"}),
                       doctest::Contains("missing.pt"), ClassifyError);
  // A truncated copy of the real encoder.
  {
    std::ifstream in(dir + "/encoder.pt", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream out(tmp + "/truncated.pt", std::ios::binary);
    out << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_AS(load_sentence_encoder({tmp + "/truncated.pt", dir + "/tokenizer.model"}),
                  ClassifyError);
  {
    std::ifstream in(dir + "/encoder-bf16.pt", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream out(tmp + "/truncated-bf16.pt", std::ios::binary);
    out << bytes.substr(0, bytes.size() * 3 / 4);
  }
  CHECK_THROWS_WITH_AS(
      load_sentence_encoder({tmp + "/truncated-bf16.pt", dir + "/tokenizer.model"}),
      doctest::Contains("truncated-bf16.pt"), ClassifyError);
  std::filesystem::remove_all(tmp);
}

#endif
