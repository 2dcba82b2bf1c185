// The native (oneDNN, no libtorch) USE-lite encoder against vectors from the original TF.js
// model, in float32 and bfloat16, single and batched; and its errors for bad weight files.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "learned/use_lite_native_encoder.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "test_learned_support.hpp"

#include <cmath>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;

namespace {

std::shared_ptr<const SentenceEncoder> native(EncoderPrecision precision,
                                              const std::string& weights = "") {
  const auto dir = learned_test::model_dir();
  EncoderOptions o;
  o.encoder_path = weights.empty() ? dir + "/use-lite.safetensors" : weights;
  o.tokenizer_path = dir + "/tokenizer.model";
  o.precision = precision;
  return detail::load_native_use_lite(o);
}

// Largest absolute difference and cosine of each row of `rows` to the reference vectors.
void check_against_reference(const std::vector<float>& rows, double max_diff, double min_cosine) {
  const auto doc = learned_test::reference();
  std::size_t i = 0;
  for (const auto& item : doc.at("items").as_array()) {
    CAPTURE(item.at("text").as_string());
    double worst = 0.0, cosine = 0.0, norm = 0.0;
    const auto& ref = item.at("embedding").as_array();
    for (std::size_t d = 0; d < 512; ++d) {
      const double r = ref[d].to_number<double>();
      const double v = rows[i * 512 + d];
      worst = std::max(worst, std::abs(v - r));
      cosine += v * r;
      norm += v * v;
    }
    CHECK(worst < max_diff);
    CHECK(cosine > min_cosine);
    CHECK(norm == doctest::Approx(1.0).epsilon(1e-5));
    ++i;
  }
  REQUIRE(i >= 8);
}

std::vector<std::string> reference_texts() {
  std::vector<std::string> texts;
  const auto doc = learned_test::reference();
  for (const auto& item : doc.at("items").as_array())
    texts.emplace_back(item.at("text").as_string());
  return texts;
}

}  // namespace

TEST_CASE("native encoder: float32 matches TF.js, single and batched") {
  const auto enc = native(EncoderPrecision::f32);
  CHECK(enc->dimension() == 512);
  const auto texts = reference_texts();
  check_against_reference(enc->encode(texts), 2e-6, 0.999999);  // mixed lengths in one batch
  std::vector<float> singles;
  for (const auto& t : texts) {
    const auto v = enc->encode(std::span(&t, 1));
    singles.insert(singles.end(), v.begin(), v.end());
  }
  check_against_reference(singles, 2e-6, 0.999999);
  CHECK(enc->token_ids(texts.back()).size() == 128);  // the 224-token text is truncated
}

TEST_CASE("native encoder: bfloat16 stays within its rounding tolerance, deterministic") {
  // oneDNN has bfloat16 matmuls from AVX-512 up; elsewhere bf16 is refused by name.
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))) {
    std::string error = "(loaded)";
    try {
      native(EncoderPrecision::bf16);
    } catch (const ClassifyError& e) {
      error = e.what();
    }
    CHECK(error.find("precision bf16 needs bfloat16 matmuls") != std::string::npos);
    CHECK(error.find("use precision auto or f32") != std::string::npos);
    return;
  }
  const auto enc = native(EncoderPrecision::bf16);
  const auto texts = reference_texts();
  const auto batch = enc->encode(texts);
  check_against_reference(batch, 0.005, 0.9999);
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& t : texts) ids.push_back(enc->token_ids(t));
  CHECK(enc->encode_tokens(ids) == batch);
  // Same files, same id as the automatic precision: a head trained on one serves the other.
  CHECK(enc->model_id() == native(EncoderPrecision::automatic)->model_id());
}

TEST_CASE("native encoder: load_sentence_encoder picks it for safetensors weights") {
  const auto dir = learned_test::model_dir();
  const auto enc = load_sentence_encoder({dir + "/use-lite.safetensors", dir + "/tokenizer.model"});
  const auto texts = reference_texts();
  CHECK(enc->encode(texts) == native(EncoderPrecision::automatic)->encode(texts));
}

TEST_CASE("native encoder: bad weight files give a clear error, not a crash") {
  const auto dir = learned_test::model_dir();
  const auto tmp = learned_test::temp_dir("native-encoder");
  auto full = mcpclass::checkpoint::read_safetensors(dir + "/use-lite.safetensors");
  SUBCASE("a tensor is missing") {
    full.tensors.erase("l1_ffn2_w");
    detail::write_safetensors(tmp + "/w.safetensors", full);
    CHECK_THROWS_WITH_AS(native(EncoderPrecision::f32, tmp + "/w.safetensors"),
                         doctest::Contains("no tensor 'l1_ffn2_w'"), ClassifyError);
  }
  SUBCASE("a tensor has the wrong shape") {
    full.tensors["l0_qkv_b"] = {{3}, {0, 0, 0}};
    detail::write_safetensors(tmp + "/w.safetensors", full);
    CHECK_THROWS_WITH_AS(native(EncoderPrecision::f32, tmp + "/w.safetensors"),
                         doctest::Contains("'l0_qkv_b' is 3, expected 768"), ClassifyError);
  }
  SUBCASE("another architecture") {
    full.metadata["architecture"] = "bert";
    detail::write_safetensors(tmp + "/w.safetensors", full);
    CHECK_THROWS_WITH_AS(native(EncoderPrecision::f32, tmp + "/w.safetensors"),
                         doctest::Contains("does not hold USE-lite weights"), ClassifyError);
  }
  SUBCASE("non-finite weights") {
    full.tensors["hidden_b"].values[7] = std::nanf("");
    detail::write_safetensors(tmp + "/w.safetensors", full);
    CHECK_THROWS_WITH_AS(native(EncoderPrecision::f32, tmp + "/w.safetensors"),
                         doctest::Contains("'hidden_b' holds non-finite values"), ClassifyError);
  }
  SUBCASE("a truncated file") {
    std::ifstream in(dir + "/use-lite.safetensors", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(tmp + "/w.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    CHECK_THROWS_WITH_AS(native(EncoderPrecision::f32, tmp + "/w.safetensors"),
                         doctest::Contains("w.safetensors"), ClassifyError);
  }
  std::filesystem::remove_all(tmp);
}

#endif
