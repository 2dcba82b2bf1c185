// tokenizer.json and vocab.txt through open_text_tokenizer: the bad inputs (each a clear
// ClassifyError, never a crash) and what the reference comparison (tests/tokenizers) cannot see.
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#ifdef MCPCLASS_WITH_LEARNED
#include "mcpclass/learned/embedding_encoder.hpp"
#include "test_learned_support.hpp"

#include <cmath>

using namespace mcpclass::learned;
#endif

using namespace mcpclass::tokenizers;
using mcpclass::classify::ClassifyError;

namespace {

std::string fixture(const std::string& name) {
  return std::string(MCPCLASS_SOURCE_DIR) + "/tests/tokenizers/fixtures/" + name + ".json";
}

std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("mcpclass-text-tokenizer-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

boost::json::object fixture_json(const std::string& name) {
  std::ifstream in(fixture(name));
  std::stringstream buf;
  buf << in.rdbuf();
  return boost::json::parse(buf.str()).as_object();
}

std::string write(const std::string& dir, const std::string& file, const std::string& text) {
  const std::string path = dir + "/" + file;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("text tokenizer: invalid UTF-8 is an error naming its byte offset") {
  for (const char* name : {"bert-uncased", "roberta", "xlmr"}) {
    const auto tok = open_text_tokenizer(fixture(name));
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(tok->encode("ok\xff"), doctest::Contains("offset 2"), ClassifyError);
    CHECK_THROWS_WITH_AS(tok->encode("\xC0\xAF"), doctest::Contains("not valid UTF-8"),
                         ClassifyError);  // overlong '/'
    CHECK_THROWS_WITH_AS(tok->encode("a\xED\xA0\x80"), doctest::Contains("offset 1"),
                         ClassifyError);  // a UTF-16 surrogate
    CHECK_THROWS_WITH_AS(tok->encode("abc\xE2\x82"), doctest::Contains("offset 3"),
                         ClassifyError);  // cut short
    CHECK_FALSE(tok->encode("still works").ids.empty());
  }
}

TEST_CASE("text tokenizer: a bad tokenizer.json is an error naming the file and the block") {
  const auto dir = scratch_dir("bad");
  CHECK_THROWS_WITH_AS(open_text_tokenizer(dir + "/missing.json"),
                       doctest::Contains("not a readable file"), ClassifyError);
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "broken.json", "{\"model\": ")),
                       doctest::Contains("not valid JSON"), ClassifyError);
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "nomodel.json", "{}")),
                       doctest::Contains("has no 'model'"), ClassifyError);

  auto doc = fixture_json("bert-uncased");
  doc["normalizer"] = {{"type", "Bogus"}};
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "type.json", boost::json::serialize(doc))),
                       doctest::Contains("unsupported normalizer type 'Bogus'"), ClassifyError);

  doc = fixture_json("bert-uncased");
  doc["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "regex.json", boost::json::serialize(doc))),
                       doctest::Contains("invalid regex '(unclosed'"), ClassifyError);

  doc = fixture_json("roberta");
  doc["model"].as_object()["merges"].as_array().push_back(boost::json::array{"zz\xC4\xA0", "q"});
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "merge.json", boost::json::serialize(doc))),
                       doctest::Contains("not in the vocabulary"), ClassifyError);

  doc = fixture_json("xlmr");
  doc["normalizer"].as_object()["precompiled_charsmap"] = "/////w==";  // trie size 2^32-1
  CHECK_THROWS_WITH_AS(
      open_text_tokenizer(write(dir, "charsmap.json", boost::json::serialize(doc))),
      doctest::Contains("trie size exceeds"), ClassifyError);

  doc = fixture_json("xlmr");
  doc["model"].as_object()["unk_id"] = 1000000;
  CHECK_THROWS_WITH_AS(open_text_tokenizer(write(dir, "unk.json", boost::json::serialize(doc))),
                       doctest::Contains("out of the vocabulary"), ClassifyError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("text tokenizer: a stride that leaves no room in the window is refused at load") {
  TokenizerOptions o;
  o.max_length = 6;  // 4 tokens besides [CLS] and [SEP]
  o.stride = 4;
  CHECK_THROWS_WITH_AS(open_text_tokenizer(fixture("bert-uncased"), o),
                       doctest::Contains("no room"), ClassifyError);
  o.stride = 3;
  const auto tok = open_text_tokenizer(fixture("bert-uncased"), o);
  const auto t = tok->encode("a b c d e f g h i j");
  CHECK(t.ids.size() == 6);
  REQUIRE(t.overflowing.size() == 6);  // windows start 1 token apart: 10 tokens, 4 per window
  CHECK(t.overflowing.back().offsets[1].first == 12);  // "g": the last window is g h i j
}

TEST_CASE("text tokenizer: a regex that backtracks at every position fails the text in time") {
  // Issue 47: a Split pattern that backtracks exponentially at each start position took 1.71 s
  // on a 2 KB text, each pcre2_match call within PCRE2's own limit. The text now has a budget.
  const auto dir = scratch_dir("regex-budget");
  auto doc = fixture_json("bert-uncased");
  doc["pre_tokenizer"] = {{"type", "Split"},
                          {"pattern", {{"Regex", "(?:a|aa)+$|."}}},
                          {"behavior", "Isolated"},
                          {"invert", false}};
  const auto tok = open_text_tokenizer(write(dir, "split.json", boost::json::serialize(doc)));
  std::string hostile;
  while (hostile.size() < 2048) hostile += std::string(25, 'a') + "b";
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(tok->encode(hostile),
                       doctest::Contains("needs more than its matching budget on this text of "
                                         "2054 bytes"),
                       ClassifyError);
  const auto ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(ms < 200);  // ~40 ms; the whole text was tokenized in 1.25 s before
  // The same pattern on ordinary text (one cheap match per character) still tokenizes.
  std::string plain;
  while (plain.size() < 100'000) plain += "the quick brown fox jumps over the lazy dog, aab. ";
  CHECK_FALSE(tok->encode(plain).ids.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "text tokenizer: vocab.txt runs BERT's pipeline with the ids of the equivalent "
    "tokenizer.json") {
  const auto dir = scratch_dir("vocab");
  const auto doc = fixture_json("bert-uncased");
  std::vector<std::string> by_id(doc.at("model").at("vocab").as_object().size());
  for (const auto& [token, id] : doc.at("model").at("vocab").as_object())
    by_id.at(static_cast<std::size_t>(id.as_int64())) = std::string(token);
  std::string lines;
  for (const auto& t : by_id) lines += t + "\n";
  const auto vocab = open_text_tokenizer(write(dir, "vocab.txt", lines));
  const auto json = open_text_tokenizer(fixture("bert-uncased"));
  CHECK(vocab->vocab_size() == json->vocab_size());
  for (const char* text :
       {"Héllo, WORLD! [CLS] 中文 x²", "", "  tabs\tand\nnewlines  ", "[MASK]"}) {
    CAPTURE(text);
    const auto a = vocab->encode(text), b = json->encode(text);
    CHECK(a.ids == b.ids);
    CHECK(a.offsets == b.offsets);
  }
  // do_lower_case false in tokenizer_config.json next to it: the cased pipeline.
  write(dir, "tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 8})");
  const auto cased = open_text_tokenizer(dir + "/vocab.txt", {0, 0, true});
  CHECK(cased->encode("Hello").ids != vocab->encode("Hello").ids);
  CHECK(cased->encode("a b c d e f g h i j k").ids.size() == 8);  // model_max_length
  std::filesystem::remove_all(dir);
}

TEST_CASE("text tokenizer: concurrent encodes give the sequential results") {
  const auto tok = open_text_tokenizer(fixture("llama3"));  // BPE with its shared word cache
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i)
    texts.push_back("text " + std::to_string(i * 7919) + " wörds repeated zzz" +
                    std::string(static_cast<std::size_t>(i % 13), '!'));
  std::vector<std::vector<std::int32_t>> expected;
  for (const auto& t : texts) expected.push_back(tok->encode(t).ids);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int round = 0; round < 5; ++round)
        for (std::size_t i = 0; i < texts.size(); ++i)
          if (tok->encode(texts[i]).ids != expected[i]) ++mismatches[static_cast<std::size_t>(k)];
    });
  for (auto& t : threads) t.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

#ifdef MCPCLASS_WITH_LEARNED
TEST_CASE("text tokenizer: an encoder takes a tokenizer.json where it took a sentencepiece model") {
  EncoderOptions o;
  o.encoder_path = learned_test::model_dir() + "/use-lite.safetensors";
  o.tokenizer_path = fixture("bert-uncased");  // ids below USE-lite's 8000 rows
  o.max_tokens = 16;
  const auto encoder = load_sentence_encoder(o);
  const auto tok = open_text_tokenizer(fixture("bert-uncased"));
  CHECK(encoder->piece_count() == tok->vocab_size());
  const std::string text =
      "What is the integral of x^2 from 0 to 3? Héllo [MASK] 中文 and more words";
  auto expected = tok->encode(text).ids;
  REQUIRE(expected.size() > 16);
  expected.resize(16);
  CHECK(encoder->token_ids(text) == expected);
  const auto v = encoder->encode(std::vector<std::string>{text});
  REQUIRE(v.size() == encoder->dimension());
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  CHECK(std::abs(norm - 1.0) < 1e-4);
}
#endif
