// The built-in PII recognizers: each type's validation (Luhn, SSN ranges, IBAN mod-97, IPv4
// octets, IPv6 forms, e-mail grammar, phone shapes), the labelled set tests/data/pii/labelled.jsonl
// (span-level precision and recall, overall, per type and on the hand-written held-out part),
// 1 MB hostile inputs, and redaction.
#include "mcpclass/routing/pii_recognizers.hpp"

#include "mcpclass/util/config_error.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using mcpclass::routing::PiiMatch;
using mcpclass::routing::PiiRecognizers;
using mcpclass::routing::redact;

namespace {

// "TYPE:text" for each match, in order.
std::vector<std::string> found(std::string_view text, const PiiRecognizers& r = PiiRecognizers()) {
  std::vector<std::string> out;
  for (const auto& m : r.find(text)) {
    out.push_back(m.type + ":" + std::string(text.substr(m.begin, m.end - m.begin)));
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("pii recognizers: credit cards are Luhn-checked whole numbers") {
  CHECK(found("card 4111 1111 1111 1111 ok") == Strings{"CREDIT_CARD:4111 1111 1111 1111"});
  CHECK(found("card 4111-1111-1111-1111.") == Strings{"CREDIT_CARD:4111-1111-1111-1111"});
  CHECK(found("amex 378282246310005") == Strings{"CREDIT_CARD:378282246310005"});
  CHECK(found("amex 3782 822463 10005") == Strings{"CREDIT_CARD:3782 822463 10005"});
  CHECK(found("(4111 1111 1111 1111)") == Strings{"CREDIT_CARD:4111 1111 1111 1111"});
  CHECK(found("Luhn fails: 4111 1111 1111 1112").empty());
  CHECK(found("Luhn fails: 4111111111111112").empty());
  CHECK(found("mixed separators 4111 1111-1111 1111").empty());
  CHECK(found("no issuer starts with 9: 9111111111111111 or 0000 0000 0000 0000").empty());
  CHECK(found("inside a longer run 41111111111111110000").empty());
  CHECK(found("glued ID4111111111111111 and 12-4111111111111111").empty());
  CHECK(found("ids #4111111111111111 and 1,4111111111111111").empty());
}

TEST_CASE("pii recognizers: US social security numbers outside the never-issued ranges") {
  CHECK(found("SSN 536-22-1847.") == Strings{"US_SSN:536-22-1847"});
  CHECK(found("SSN 536 22 1847") == Strings{"US_SSN:536 22 1847"});
  for (const char* invalid : {"000-12-3456", "666-12-3456", "900-12-3456", "999-12-3456",
                              "536-00-1847", "536-22-0000", "078-05-1120", "219-09-9999"}) {
    CAPTURE(invalid);
    CHECK(found(std::string("SSN ") + invalid).empty());
  }
  CHECK(found("mixed 536-22 1847").empty());
  CHECK(found("536221847 bare").empty());
}

TEST_CASE("pii recognizers: IBANs of a registered length with a mod-97 checksum") {
  CHECK(found("IBAN DE89 3704 0044 0532 0130 00.") ==
        Strings{"IBAN_CODE:DE89 3704 0044 0532 0130 00"});
  CHECK(found("IBAN DE89370400440532013000") == Strings{"IBAN_CODE:DE89370400440532013000"});
  CHECK(found("GB29NWBK60161331926819") == Strings{"IBAN_CODE:GB29NWBK60161331926819"});
  CHECK(found("NO9386011117947") == Strings{"IBAN_CODE:NO9386011117947"});
  CHECK(found("bad checksum DE88 3704 0044 0532 0130 00").empty());
  CHECK(found("unknown country XX89370400440532013000").empty());
  CHECK(found("too long DE893704004405320130001").empty());
  CHECK(found("too short DE8937040044053201300").empty());
  CHECK(found("irregular groups DE89 37040044 0532 0130 00").empty());
  CHECK(found("lower case de89370400440532013000").empty());
}

TEST_CASE("pii recognizers: IPv4 octets up to 255 without leading zeros") {
  CHECK(found("ping 192.168.1.254, then 10.0.0.1:8080.") ==
        Strings{"IP_ADDRESS:192.168.1.254", "IP_ADDRESS:10.0.0.1"});
  CHECK(found("0.0.0.0/0 and 255.255.255.255") ==
        Strings{"IP_ADDRESS:0.0.0.0", "IP_ADDRESS:255.255.255.255"});
  CHECK(found("octet 256.1.1.1").empty());
  CHECK(found("octet 1.1.1.256").empty());
  CHECK(found("leading zero 192.168.01.1").empty());
  CHECK(found("three parts 1.2.3 or five 1.2.3.4.5").empty());
  CHECK(found("glued v1.2.3.4 and 1.2.3.4x").empty());
}

TEST_CASE("pii recognizers: IPv6 full, compressed and with an embedded IPv4") {
  CHECK(found("[2001:db8::8a2e:370:7334]:443") == Strings{"IP_ADDRESS:2001:db8::8a2e:370:7334"});
  CHECK(found("loopback ::1.") == Strings{"IP_ADDRESS:::1"});
  CHECK(found("2001:0DB8:85A3:0000:0000:8A2E:0370:7334") ==
        Strings{"IP_ADDRESS:2001:0DB8:85A3:0000:0000:8A2E:0370:7334"});
  CHECK(found("mapped ::ffff:192.0.2.128 here") == Strings{"IP_ADDRESS:::ffff:192.0.2.128"});
  CHECK(found("fe80::1ff:fe23:4567:890a%eth0") == Strings{"IP_ADDRESS:fe80::1ff:fe23:4567:890a"});
  CHECK(found("2001:db8:::1 2001:db8::1::2 1:2:3:4:5:6:7:8:9 1:2:3:4:5:6:7").empty());
  CHECK(found("12345::1 and 2001:db8::12g4 and 1.2.3.4.5::1").empty());
  CHECK(found("MAC 00:1A:2B:3C:4D:5E, time 10:30:45, std::vector, ::").empty());
}

TEST_CASE("pii recognizers: e-mail addresses in prose") {
  CHECK(found("Write to jane.doe@example.org, or call.") ==
        Strings{"EMAIL_ADDRESS:jane.doe@example.org"});
  CHECK(found("(alice_smith+news@mail.example.co.uk)") ==
        Strings{"EMAIL_ADDRESS:alice_smith+news@mail.example.co.uk"});
  CHECK(found("<bob@example.com>.") == Strings{"EMAIL_ADDRESS:bob@example.com"});
  CHECK(found("'o'connor@example.ie'") == Strings{"EMAIL_ADDRESS:o'connor@example.ie"});
  CHECK(found("reply-to=bob@example.com") == Strings{"EMAIL_ADDRESS:bob@example.com"});
  CHECK(found("émile@example.fr") == Strings{"EMAIL_ADDRESS:émile@example.fr"});
  CHECK(found("请发邮件到zhang@example.cn。") == Strings{"EMAIL_ADDRESS:zhang@example.cn"});
  CHECK(found("a@example.com,b@example.com") ==
        Strings{"EMAIL_ADDRESS:a@example.com", "EMAIL_ADDRESS:b@example.com"});
  for (const char* invalid :
       {"user@localhost", "@example.com", "john..doe@example.com", "john.@example.com",
        "bob@example.c", "bob@@example.com", "bob@-example.com", "bob@example.com1",
        "bob@example.com_x", "bob@example.com@evil"}) {
    CAPTURE(invalid);
    CHECK(found(std::string("to ") + invalid + " now").empty());
  }
}

TEST_CASE("pii recognizers: phone numbers in E.164 and national formats") {
  for (const char* phone :
       {"(415) 555-2671",    "415-555-2671",        "415.555.2671",     "415 555 2671",
        "1-800-555-0123",    "1 (800) 555-0123",    "+1 415 555 2671",  "+14155552671",
        "+44 20 7946 0958",  "+44 (0)20 7946 0958", "020 7946 0958",    "07700 900123",
        "030 123456",        "030/123456",          "(030) 1234567",    "01 23 45 67 89",
        "+33 6 12 34 56 78", "03-1234-5678",        "+81 3-1234-5678",  "0412 345 678",
        "044 668 18 00",     "0044 20 7946 0958",   "+55 11 91234-5678"}) {
    CAPTURE(phone);
    CHECK(found(std::string("call ") + phone + ", thanks") ==
          Strings{std::string("PHONE_NUMBER:") + phone});
  }
  for (const char* other :
       {"+1 555 12", "555-2671", "123-456-7890", "4155552671", "+0 20 7946 0958", "2024-01-15",
        "15.01.2024", "01/15/2024", "0-306-40615-2", "978-3-16-148410-0", "030 1234 56",
        "+1 415 555 26710"}) {
    CAPTURE(other);
    CHECK(found(std::string("see ") + other + " there").empty());
  }
  // Two numbers in one run of groups, split where a space may split them.
  CHECK(found("020 7946 0958 4111 1111 1111 1111") ==
        Strings{"PHONE_NUMBER:020 7946 0958", "CREDIT_CARD:4111 1111 1111 1111"});
  CHECK(found("call 020 7946 0958 2 times") == Strings{"PHONE_NUMBER:020 7946 0958"});
  CHECK(found("csv: DE,+49 151 23456789,x") == Strings{"PHONE_NUMBER:+49 151 23456789"});
  CHECK(found("ticket #0412-345-678").empty());
  // Groups that are no number are a part of something else: no number starts after them.
  CHECK(found("5126 0933 9295 9544 and DE88 3704 0044 0532 0130 00").empty());
}

TEST_CASE("pii recognizers: the types asked for, and an unknown type named") {
  const std::string text = "mail bob@example.com, card 4111111111111111, ip 10.0.0.1";
  const std::vector<std::string> only{"EMAIL_ADDRESS", "IP_ADDRESS"};
  CHECK(found(text, PiiRecognizers(only)) ==
        Strings{"EMAIL_ADDRESS:bob@example.com", "IP_ADDRESS:10.0.0.1"});
  // A card number stays a card when only phones are wanted.
  const std::vector<std::string> phones{"PHONE_NUMBER"};
  CHECK(found("4111 1111 1111 1111", PiiRecognizers(phones)).empty());
  const std::vector<std::string> bad{"EMAIL_ADDRESS", "PASSPORT"};
  CHECK_THROWS_WITH_AS(PiiRecognizers{bad}, doctest::Contains("unknown PII type 'PASSPORT'"),
                       mcpclass::util::ConfigError);
  CHECK(PiiRecognizers::is_known_type("US_SSN"));
  CHECK_FALSE(PiiRecognizers::is_known_type("us_ssn"));
  CHECK(PiiRecognizers::known_types().size() == 6);
}

TEST_CASE("pii recognizers: redaction replaces each span with its type") {
  const std::string text = "mail bob@example.com or call +1 415 555 2671.";
  const auto matches = PiiRecognizers().find(text);
  CHECK(redact(text, matches) == "mail [EMAIL_ADDRESS] or call [PHONE_NUMBER].");
  // Overlapping matches are merged (every byte either covers goes), a match past the text's end
  // is cut there, reversed and wholly outside ones are dropped.
  const std::vector<PiiMatch> hostile{
      {"A", 5, 10, 1}, {"B", 7, 12, 1}, {"C", 40, 99, 1}, {"D", 20, 18, 1}, {"E", 18, 99, 1}};
  CHECK(redact("0123456789abcdefghij", hostile) == "01234[A]cdefgh[E]");
  CHECK(redact("", {}) == "");
}

TEST_CASE("pii recognizers: redaction takes matches in any order (issue 47)") {
  // A span tool that answers grouped by label: the SSN first, then the e-mail before it.
  const std::string text = "Mail john.smith@example.com, my SSN is 078-05-1120.";
  const std::vector<PiiMatch> grouped{{"US_SSN", 39, 50, 0.9}, {"EMAIL_ADDRESS", 5, 27, 0.9}};
  CHECK(redact(text, grouped) == "Mail [EMAIL_ADDRESS], my SSN is [US_SSN].");
  const auto merged = mcpclass::routing::merged_spans(grouped, text.size());
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].type == "EMAIL_ADDRESS");
  CHECK(merged[1].begin == 39);
}

TEST_CASE("pii recognizers: 1 MB hostile inputs end with the right answer") {
  const PiiRecognizers r;
  const std::size_t size = 1 << 20;
  const auto repeat = [&](std::string_view unit) {
    std::string s;
    while (s.size() < size) s += unit;
    return s;
  };
  for (const char* unit : {"1-", "1 ", "a@", "a.", "@.", "1.", "1:", ":", "::", "+(", "(1) ", "0 ",
                           "DE89 ", "a@a.", "1.1.1.", "\xff\xc3", "\xc3"}) {
    CAPTURE(unit);
    CHECK(r.find(repeat(unit)).empty());
  }
  CHECK(r.find(std::string(size, '7')).empty());
  CHECK(r.find(std::string(size, 'A')).empty());
  // A long local part and a long domain: neither is an address (64 and 253 bytes at most).
  CHECK(r.find(std::string(size, 'a') + "@example.com").empty());
  CHECK(r.find("a@" + repeat("b.") + "com").empty());
  // Valid numbers repeated, split by spaces: every one is found.
  const auto cards = r.find(repeat("4111111111111111 "));
  CHECK(cards.size() == (size + 16) / 17);
  const auto addresses = r.find(repeat("x@example.com "));
  CHECK(addresses.size() == (size + 13) / 14);
  // Random bytes never crash, and what is found lies inside the text, in order.
  std::string noise(size, '\0');
  std::uint32_t state = 12345;
  for (auto& c : noise) {
    state = state * 1664525u + 1013904223u;
    c = "0123456789 -.+()@:abcdef\xc3\xa9"[(state >> 24) % 27];
  }
  std::size_t last = 0;
  for (const auto& m : r.find(noise)) {
    CHECK(m.begin >= last);
    CHECK(m.end <= noise.size());
    last = m.end;
  }
}

TEST_CASE(
    "pii recognizers: labelled set precision and recall of at least 0.98, overall and per type") {
  std::ifstream in(MCPCLASS_SOURCE_DIR "/tests/data/pii/labelled.jsonl");
  REQUIRE(in.good());
  const PiiRecognizers recognizers;
  using Span = std::tuple<std::string, std::size_t, std::size_t>;
  struct Counts {
    std::size_t true_positives = 0, predicted = 0, expected = 0;
  };
  std::map<std::string, Counts> by_type, by_split;  // "" in by_type: every type
  std::size_t lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++lines;
    const auto row = boost::json::parse(line).as_object();
    const std::string text(row.at("text").as_string());
    const std::string split(row.at("split").as_string());
    std::set<Span> expected;
    for (const auto& s : row.at("spans").as_array()) {
      const auto& o = s.as_object();
      expected.emplace(std::string(o.at("type").as_string()),
                       static_cast<std::size_t>(o.at("start").as_int64()),
                       static_cast<std::size_t>(o.at("end").as_int64()));
    }
    std::set<Span> predicted;
    for (const auto& m : recognizers.find(text)) predicted.emplace(m.type, m.begin, m.end);
    const auto count = [&](const Span& s, bool is_predicted, bool is_expected) {
      for (auto* c : {&by_type[std::get<0>(s)], &by_type[""], &by_split[split]}) {
        c->predicted += is_predicted;
        c->expected += is_expected;
        c->true_positives += is_predicted && is_expected;
      }
    };
    for (const auto& s : predicted) {
      const bool hit = expected.count(s) != 0;
      count(s, true, hit);
      if (!hit)
        MESSAGE("false positive " << std::get<0>(s) << " in " << split << " text: " << text);
    }
    for (const auto& s : expected) {
      if (predicted.count(s) == 0) {
        count(s, false, true);
        MESSAGE("missed " << std::get<0>(s) << " in " << split << " text: " << text);
      }
    }
  }
  CHECK(lines >= 300);
  const auto ratio = [](std::size_t a, std::size_t b) { return b == 0 ? 1.0 : double(a) / b; };
  const auto report = [&](const std::string& name, const Counts& c) {
    MESSAGE(name << ": precision " << ratio(c.true_positives, c.predicted) << " ("
                 << c.true_positives << "/" << c.predicted << "), recall "
                 << ratio(c.true_positives, c.expected) << " (" << c.true_positives << "/"
                 << c.expected << ")");
  };
  for (const auto& [type, c] : by_type) report(type.empty() ? "all types" : type, c);
  for (const auto& [split, c] : by_split) report("split " + split, c);
  for (const auto& [type_name, c] : by_type) {
    const std::string& type = type_name;  // clang 14 cannot capture a structured binding in CAPTURE
    CAPTURE(type);
    CHECK(ratio(c.true_positives, c.predicted) >= 0.98);
    CHECK(ratio(c.true_positives, c.expected) >= 0.98);
  }
  CHECK(by_type.size() == 7);  // every type, and all of them
}
