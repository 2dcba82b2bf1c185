// Sentence pairs through the tokenizers (issue 48): truncate_pair against tokenizers'
// truncate_encodings table, the pair templates of tokenizer.json (the reference comparison,
// tests/tokenizers --pairs, checks ids, types and offsets on every fixture), and the refusals.
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/truncation.hpp"
#ifdef MCPCLASS_WITH_LEARNED
#include "tokenizers/sentencepiece_model_writer.hpp"
#endif

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace mcpclass::tokenizers;
using mcpclass::classify::ClassifyError;

namespace {

TokenizedText tokens(std::size_t n) {
  TokenizedText t;
  for (std::size_t i = 0; i < n; ++i) {
    t.ids.push_back(static_cast<std::int32_t>(i));
    t.tokens.push_back("t" + std::to_string(i));
    t.offsets.emplace_back(i, i + 1);
    t.type_ids.push_back(0);
    t.special_tokens_mask.push_back(0);
  }
  return t;
}

std::pair<std::size_t, std::size_t> cut(std::size_t n1, std::size_t n2, std::size_t max,
                                        hf::PairTruncation s = hf::PairTruncation::longest_first,
                                        hf::TruncationSide side = hf::TruncationSide::right) {
  auto a = tokens(n1), b = tokens(n2);
  hf::truncate_pair(a, b, max, s, side);
  return {a.ids.size(), b.ids.size()};
}

const std::string kFixtures = MCPCLASS_SOURCE_DIR "/tests/tokenizers/fixtures/";

}  // namespace

TEST_CASE("tokenizer pairs: longest_first cuts as tokenizers' truncate_encodings table says") {
  using P = std::pair<std::size_t, std::size_t>;
  // tokenizers/src/utils/truncation.rs, truncate_encodings_longest_first: empty 0, short 2,
  // medium 4, long 8 tokens, max_length 7.
  const std::size_t e = 0, s = 2, m = 4, l = 8;
  CHECK(cut(e, e, 7) == P{0, 0});
  CHECK(cut(e, l, 7) == P{0, 7});
  CHECK(cut(s, m, 7) == P{2, 4});
  CHECK(cut(s, l, 7) == P{2, 5});
  CHECK(cut(m, m, 7) == P{3, 4});
  CHECK(cut(m, l, 7) == P{3, 4});
  CHECK(cut(l, e, 7) == P{7, 0});
  CHECK(cut(l, s, 7) == P{5, 2});
  CHECK(cut(l, m, 7) == P{4, 3});
  CHECK(cut(l, l, 7) == P{3, 4});
  // The left side keeps the ends.
  auto a = tokens(8), b = tokens(8);
  hf::truncate_pair(a, b, 7, hf::PairTruncation::longest_first, hf::TruncationSide::left);
  CHECK(a.ids == std::vector<std::int32_t>{5, 6, 7});
  CHECK(b.ids == std::vector<std::int32_t>{4, 5, 6, 7});
}

TEST_CASE("tokenizer pairs: only_first and only_second cut one text, or refuse") {
  using P = std::pair<std::size_t, std::size_t>;
  CHECK(cut(8, 2, 7, hf::PairTruncation::only_first) == P{5, 2});
  CHECK(cut(2, 8, 7, hf::PairTruncation::only_second) == P{2, 5});
  CHECK_THROWS_WITH_AS(cut(2, 8, 1, hf::PairTruncation::only_first),
                       doctest::Contains("truncating only the first text cannot bring it to 1"),
                       ClassifyError);
}

TEST_CASE("tokenizer pairs: the pair template's special tokens and token types") {
  // DeBERTa-v3's: [CLS] A [SEP] B:1 [SEP]:1 (ids 1 and 2).
  const auto t = open_text_tokenizer(kFixtures + "deberta-v3.json");
  const auto one = t->encode("hello world");
  const auto two = t->encode_pair("hello world", "how are you");
  REQUIRE(two.ids.size() > one.ids.size() + 1);
  CHECK(two.ids.front() == 1);
  CHECK(two.ids.back() == 2);
  const std::size_t first = one.ids.size();  // [CLS] A [SEP]
  CHECK(std::vector<std::int32_t>(two.ids.begin(), two.ids.begin() + first) == one.ids);
  for (std::size_t i = 0; i < two.type_ids.size(); ++i)
    CHECK(two.type_ids[i] == (i < first ? 0 : 1));
  // Without special tokens: the texts one after the other, the second of type 1.
  const auto bare = t->encode_pair("hello world", "how are you", false);
  CHECK(bare.ids.size() == two.ids.size() - 3);
  CHECK(bare.type_ids.back() == 1);
  // Truncation leaves room for the pair's three special tokens.
  TokenizerOptions o;
  o.max_length = 9;
  const auto short_pair =
      open_text_tokenizer(kFixtures + "deberta-v3.json", o)
          ->encode_pair("write a python function to sort a list", "solve the equation x + 2 = 5");
  CHECK(short_pair.ids.size() == 9);
  CHECK(short_pair.ids.back() == 2);
}

TEST_CASE("tokenizer pairs: BERT's vocab.txt pipeline joins a pair, sentencepiece refuses one") {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("mcpclass-pairs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream vocab(dir + "/vocab.txt");
    vocab << "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\n";
  }
  const auto bert = open_text_tokenizer(dir + "/vocab.txt")->encode_pair("hello", "world");
  CHECK(bert.ids == std::vector<std::int32_t>{2, 4, 3, 5, 3});  // [CLS] A [SEP] B [SEP]
  CHECK(bert.type_ids == std::vector<std::uint32_t>{0, 0, 0, 1, 1});
#ifdef MCPCLASS_WITH_LEARNED  // sentencepiece models come with the learned component
  {
    std::ofstream model(dir + "/spm.model", std::ios::binary);
    model << write_unigram_model({{"<unk>", 0.0f, PieceType::unknown},
                                  {"<s>", 0.0f, PieceType::control},
                                  {"</s>", 0.0f, PieceType::control},
                                  {"\xe2\x96\x81hello", -1.0f}},
                                 "");
  }
  const auto spm = open_text_tokenizer(dir + "/spm.model");
  CHECK_THROWS_WITH_AS(spm->encode_pair("hello", "hello"),
                       doctest::Contains("this tokenizer has no pair template"), ClassifyError);
#endif
  std::filesystem::remove_all(dir);
}
