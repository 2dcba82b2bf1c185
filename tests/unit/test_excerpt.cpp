// What of a peer's text an error message quotes (util/excerpt.hpp): at most kExcerptBytes, cut on
// a character boundary, valid UTF-8 with control characters as spaces, and the full size said.
// The transports' HTTP errors and the token endpoint's refusals quote through it too; they cut
// the body at 200 bytes wherever that fell, inside a character or not, before.
#include "util/excerpt.hpp"

#include <doctest/doctest.h>

#include <string>

using mcpclass::util::excerpt;
using mcpclass::util::kExcerptBytes;

TEST_CASE("excerpt: at most kExcerptBytes, on a character boundary, valid UTF-8") {
  CHECK(excerpt("short reply") == "short reply");
  CHECK(excerpt("") == "");
  // Cut on a character boundary: "é" is two bytes, so 199 bytes of them would split one.
  std::string accents;
  for (int i = 0; i < 150; ++i) accents += "é";
  CHECK(excerpt(accents) == accents.substr(0, kExcerptBytes) + "… (300 bytes)");
  CHECK(excerpt(accents, 199) == accents.substr(0, 198) + "… (300 bytes)");
  // A three-byte character across byte 200: left out whole.
  const std::string euro = std::string(199, 'x') + "€";
  CHECK(excerpt(euro) == std::string(199, 'x') + "… (202 bytes)");
  // Bytes that are no UTF-8 become U+FFFD, control characters spaces: the excerpt goes into JSON
  // bodies and log lines.
  CHECK(excerpt("a\xff\nb") == "a\xEF\xBF\xBD b");
  CHECK(excerpt("\xe2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(excerpt(std::string(1 << 20, 'x')).size() < kExcerptBytes + 30);
}
