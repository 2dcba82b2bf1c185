// The sentencepiece tokenizer (through the dlopen'ed shim) against ids from the TF.js tokenizer.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "mcpclass/classify/errors.hpp"
#include "test_learned_support.hpp"
#include "tokenizers/tokenizer_sentencepiece.hpp"

using namespace mcpclass::learned;
using namespace mcpclass::tokenizers;
using mcpclass::classify::ClassifyError;

TEST_CASE("tokenizer: USE-lite ids equal the TF.js tokenizer's") {
  const SentencePieceTokenizer tok(learned_test::model_dir() + "/tokenizer.model");
  CHECK(tok.piece_count() == 8000);
  // Known values: the unigram lattice prefers ▁hell (2002) + o (102) to any other split.
  CHECK(tok.encode("hello") == std::vector<std::int32_t>{2002, 102});
  CHECK(tok.encode("").empty());
  const auto ref = learned_test::reference();
  for (const auto& item : ref.at("items").as_array()) {
    const auto& o = item.as_object();
    std::vector<std::int32_t> expected;
    for (const auto& id : o.at("ids").as_array())
      expected.push_back(static_cast<std::int32_t>(id.as_int64()));
    const std::string text(o.at("text").as_string());
    CAPTURE(text);
    CHECK(tok.encode(text) == expected);  // includes NFKC (ﬁ, full-width), tabs, double spaces
  }
}

TEST_CASE("tokenizer: bad model files give a clear error, not a crash") {
  const auto dir = learned_test::temp_dir("tokenizer");
  CHECK_THROWS_WITH_AS(SentencePieceTokenizer(dir + "/missing.model"),
                       doctest::Contains("cannot open tokenizer model"), ClassifyError);
  {
    std::ofstream out(dir + "/garbage.model", std::ios::binary);
    out << "this is not a protobuf \x01\x02\x03";
  }
  CHECK_THROWS_WITH_AS(SentencePieceTokenizer(dir + "/garbage.model"),
                       doctest::Contains("invalid sentencepiece model"), ClassifyError);
  { std::ofstream out(dir + "/empty.model", std::ios::binary); }
  CHECK_THROWS_AS(SentencePieceTokenizer(dir + "/empty.model"), ClassifyError);
}

#endif
