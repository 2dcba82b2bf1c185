// libFuzzer target: the built-in PII recognizers (routing::PiiRecognizers) over any bytes. The
// spans are in order, non-overlapping and inside the text; each span read alone is the same one
// match (what was found does not depend on the text around it beyond its boundaries); asking for
// one type finds exactly the matches of that type; redact() replaces exactly the spans.
#include "mcpclass/routing/pii_recognizers.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using mcpclass::routing::PiiMatch;
using mcpclass::routing::PiiRecognizers;

[[noreturn]] void fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz_pii: %s in a text of %zu bytes\n", what, text.size());
  std::abort();
}

bool same(const PiiMatch& a, const PiiMatch& b) {
  return a.type == b.type && a.begin == b.begin && a.end == b.end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const PiiRecognizers all;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto matches = all.find(text);
  std::size_t last = 0;
  std::size_t redacted_size = size;
  for (const auto& m : matches) {
    if (m.begin < last || m.begin >= m.end || m.end > size) fail("a span out of order", text);
    if (!PiiRecognizers::is_known_type(m.type)) fail("an unknown type", text);
    last = m.end;
    redacted_size = redacted_size - (m.end - m.begin) + m.type.size() + 2;
    const std::string_view alone = text.substr(m.begin, m.end - m.begin);
    const auto again = all.find(alone);
    if (again.size() != 1 || !same(again[0], PiiMatch{m.type, 0, alone.size(), 1.0})) {
      fail("a span that is not the same match alone", text);
    }
  }
  if (mcpclass::routing::redact(text, matches).size() != redacted_size) {
    fail("a redaction of the wrong size", text);
  }
  for (const auto type : PiiRecognizers::known_types()) {
    const std::vector<std::string> one{std::string(type)};
    const auto only = PiiRecognizers(one).find(text);
    std::size_t i = 0;
    for (const auto& m : matches) {
      if (m.type != type) continue;
      if (i >= only.size() || !same(only[i], m)) fail("a type asked alone found differently", text);
      ++i;
    }
    if (i != only.size()) fail("a type asked alone found more", text);
  }
  return 0;
}
