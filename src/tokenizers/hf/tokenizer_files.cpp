#include "tokenizers/hf/tokenizer_files.hpp"

#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mcpclass::tokenizers::hf {

namespace {

// tokenizer.json files of large vocabularies run to tens of MB; refuse anything far beyond.
constexpr std::uintmax_t kMaxTokenizerBytes = 256u << 20;

}  // namespace

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw classify::ClassifyError("cannot open tokenizer '" + path + "': " + ec.message());
  if (size > kMaxTokenizerBytes)
    throw classify::ClassifyError("tokenizer '" + path + "' is " + std::to_string(size) +
                                  " bytes, over the limit of " +
                                  std::to_string(kMaxTokenizerBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw classify::ClassifyError("cannot open tokenizer '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

boost::json::value parse_json(const std::string& text, const std::string& path) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec) throw classify::ClassifyError("'" + path + "' is not valid JSON: " + ec.message());
  return v;
}

// tokenizer_config.json next to the file, when there is one.
boost::json::object sibling_config(const std::string& path) {
  const auto config = std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config, ec)) return {};
  auto v = parse_json(read_text_file(config.string()), config.string());
  return v.is_object() ? v.get_object() : boost::json::object{};
}

std::string config_token(const boost::json::object& config, const char* key, std::string fallback) {
  const auto* v = config.if_contains(key);
  if (v == nullptr) return fallback;
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_object())
    if (const auto* c = v->get_object().if_contains("content"); c != nullptr && c->is_string())
      return std::string(c->get_string());
  return fallback;
}

}  // namespace mcpclass::tokenizers::hf
