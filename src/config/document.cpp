#include "config/document.hpp"

#include "mcpclass/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <string>

namespace mcpclass::config::detail {

namespace {

// YAML 1.2 core-schema numbers only: "inf"/"nan" spelled as words stay strings, unlike
// from_chars, so the text must start like a number.
bool looks_numeric(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return !s.empty() &&
         (std::isdigit(static_cast<unsigned char>(s[0])) ||
          (s[0] == '.' && s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[1]))));
}

template <typename T>
std::optional<T> parse_whole(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

json::value plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (looks_numeric(s)) {
    if (const auto i = parse_whole<std::int64_t>(s)) return *i;
    if (const auto d = parse_whole<double>(s)) return *d;
  }
  if (s == ".inf" || s == "+.inf" || s == ".Inf" || s == "+.Inf")
    return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf") return -std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN") return std::numeric_limits<double>::quiet_NaN();
  return json::string(s);
}

// Aliases share nodes in yaml-cpp, so a document of a few hundred bytes can name billions of
// nodes ("billion laughs"); converting counts every node it writes and stops at a budget no real
// configuration comes near. Depth is bounded as the JSON reader's is.
constexpr std::size_t kMaxYamlNodes = 1'000'000;
constexpr std::size_t kMaxYamlDepth = 64;

class Converter {
 public:
  json::value convert(const YAML::Node& node, std::size_t depth = 0) {
    if (++nodes_ > kMaxYamlNodes) {
      throw ConfigError("", "YAML document expands to more than " + std::to_string(kMaxYamlNodes) +
                                " nodes (aliases repeated too often?)");
    }
    if (depth > kMaxYamlDepth) {
      throw ConfigError("", "YAML error at line " + std::to_string(node.Mark().line + 1) +
                                ": nesting deeper than " + std::to_string(kMaxYamlDepth) +
                                " levels");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const auto& tag = node.Tag();
        // "!" marks a quoted scalar; an explicit !!str tag also forces a string.
        if (tag == "!" || tag == "tag:yaml.org,2002:str") return json::string(node.Scalar());
        return plain_scalar(node.Scalar());
      }
      case YAML::NodeType::Sequence: {
        json::array out;
        for (const auto& item : node) out.push_back(convert(item, depth + 1));
        return out;
      }
      case YAML::NodeType::Map: {
        json::object out;
        for (const auto& kv : node) {
          if (!kv.first.IsScalar())
            throw ConfigError("", "YAML error at line " + std::to_string(kv.first.Mark().line + 1) +
                                      ": mapping keys must be scalars");
          out[kv.first.Scalar()] = convert(kv.second, depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  std::size_t nodes_ = 0;
};

std::string position(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

json::value yaml_to_json(std::string_view text) {
  try {
    return Converter().convert(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    throw ConfigError("", "YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                              ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

json::value parse_json(std::string_view text) {
  json::stream_parser parser;
  boost::system::error_code ec;
  const std::size_t consumed = parser.write_some(text.data(), text.size(), ec);
  if (!ec && consumed < text.size()) {
    // Anything after the document must be whitespace.
    const auto rest = text.substr(consumed);
    if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos)
      throw ConfigError("", "JSON syntax error at " +
                                position(text, consumed + rest.find_first_not_of(" \t\r\n")) +
                                ": unexpected text after the document");
  }
  if (!ec) parser.finish(ec);
  if (ec)
    throw ConfigError("", "JSON syntax error at " + position(text, consumed) + ": " + ec.message());
  return parser.release();
}

}  // namespace mcpclass::config::detail
