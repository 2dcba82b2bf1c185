// The training crops of `mcpclass train --augment-crops`: short views of a long labelled text.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "learned/text_crops.hpp"

#include <doctest/doctest.h>

#include <sstream>

using mcpclass::learned::detail::text_crops;

namespace {

std::size_t word_count(const std::string& s) {
  std::istringstream in(s);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

TEST_CASE("text crops: the last sentence and a 4-12 word window of a long text") {
  const std::string text =
      "A ball is thrown straight up at 20 m/s from the edge of a cliff. Air resistance is "
      "negligible. How long does it take to reach its highest point?";
  std::mt19937_64 rng(7);
  const auto crops = text_crops(text, rng);
  REQUIRE(crops.size() == 2);
  CHECK(crops[0] == "How long does it take to reach its highest point?");
  CHECK(word_count(crops[1]) >= 4);
  CHECK(word_count(crops[1]) <= 12);
  CHECK(text.find(crops[1]) != std::string::npos);
  std::mt19937_64 same(7);
  CHECK(text_crops(text, same) == crops);  // deterministic for a seed
}

TEST_CASE("text crops: short texts and single sentences give nothing to crop") {
  std::mt19937_64 rng(1);
  CHECK(text_crops("What is the derivative of x squared?", rng).empty());
  CHECK(text_crops("", rng).empty());
  // A final sentence under three words is no useful query on its own.
  CHECK(text_crops("The market fell sharply. Why?", rng).empty());
}

#endif
