#include "mcpclass/learned/learned_examples.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

[[noreturn]] void bad(const std::string& path, std::size_t line, const std::string& what) {
  throw ClassifyError("'" + path + "' line " + std::to_string(line) + ": " + what);
}

// One CSV record (RFC 4180): quoted fields may hold commas, doubled quotes and newlines.
std::optional<std::vector<std::string>> csv_record(std::istream& in, std::size_t& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool any = false;
  char ch = 0;
  while (in.get(ch)) {
    any = true;
    if (quoted) {
      if (ch == '"') {
        if (in.peek() == '"') {
          in.get(ch);
          fields.back() += '"';
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch == '\n') {
      ++line;
      return fields;
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  if (!any) return std::nullopt;
  return fields;
}

std::vector<LabelledExample> read_csv(const std::string& path, std::istream& in) {
  std::size_t line = 1;
  const auto header = csv_record(in, line);
  if (!header) bad(path, 1, "empty file");
  std::optional<std::size_t> text_col;
  std::optional<std::size_t> cat_col;
  for (std::size_t i = 0; i < header->size(); ++i) {
    if ((*header)[i] == "text") text_col = i;
    if ((*header)[i] == "category" || (*header)[i] == "label") cat_col = i;
  }
  if (!text_col || !cat_col) bad(path, 1, "the header must name 'text' and 'category' columns");
  std::vector<LabelledExample> out;
  for (std::size_t start = line; auto rec = csv_record(in, line); start = line) {
    if (rec->size() == 1 && rec->front().empty()) continue;  // blank line
    if (rec->size() <= std::max(*text_col, *cat_col)) bad(path, start, "too few fields");
    LabelledExample e{(*rec)[*text_col], (*rec)[*cat_col], (*rec)[*text_col], {}, {}, {}};
    if (e.text.empty() || e.category.empty()) bad(path, start, "empty text or category");
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<LabelledExample> read_jsonl(const std::string& path, std::istream& in) {
  std::vector<LabelledExample> out;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    boost::system::error_code ec;
    const auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object()) bad(path, line, "not a JSON object");
    const auto& o = v.as_object();
    const auto* t = o.if_contains("text");
    const auto* c = o.if_contains("category");
    if (t == nullptr || !t->is_string() || c == nullptr || !c->is_string())
      bad(path, line, "needs string members 'text' and 'category'");
    LabelledExample e{std::string(t->as_string()), std::string(c->as_string()), {}, {}, {}, {}};
    if (const auto* id = o.if_contains("id"))
      e.id = id->is_string() ? std::string(id->as_string()) : boost::json::serialize(*id);
    else
      e.id = e.text;
    if (const auto* s = o.if_contains("source"); s && s->is_string())
      e.source = std::string(s->as_string());
    if (const auto* s = o.if_contains("label"); s && s->is_string())
      e.label = std::string(s->as_string());
    if (const auto* s = o.if_contains("split")) {
      if (!s->is_string() || (s->as_string() != "train" && s->as_string() != "test"))
        bad(path, line, "'split' must be \"train\" or \"test\"");
      e.split = std::string(s->as_string());
    }
    if (e.text.empty() || e.category.empty()) bad(path, line, "empty text or category");
    out.push_back(std::move(e));
  }
  return out;
}

std::uint64_t id_hash(const std::string& id) {
  return std::stoull(text_checksum(id), nullptr, 16);
}

}  // namespace

std::vector<LabelledExample> read_labelled_examples(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError("cannot open examples file '" + path + "'");
  auto out = path.ends_with(".jsonl") || path.ends_with(".json") ? read_jsonl(path, in)
                                                                 : read_csv(path, in);
  if (out.empty()) throw ClassifyError("examples file '" + path + "' has no examples");
  // "models/data/mmlu_pro_questions.jsonl" -> "mmlu_pro_questions"
  std::string stem = std::filesystem::path(path).filename().string();
  stem = stem.substr(0, stem.find('.'));
  for (auto& e : out)
    if (e.source.empty()) e.source = stem;
  return out;
}

bool LabelledExample::out_of_scope() const {
  return label == "oos" || label.starts_with("oos/");
}

bool in_split(const LabelledExample& example, SplitPart part, unsigned test_percent) {
  if (part == SplitPart::all) return true;
  const bool test =
      example.split.empty() ? id_hash(example.id) % 100 < test_percent : example.split == "test";
  return part == SplitPart::test ? test : !test;
}

std::vector<LabelledExample> select_split(const std::vector<LabelledExample>& examples,
                                          SplitPart part, unsigned test_percent) {
  std::vector<LabelledExample> out;
  for (const auto& e : examples)
    if (in_split(e, part, test_percent)) out.push_back(e);
  return out;
}

}  // namespace mcpclass::learned
