// The files around a tokenizer.json: reading one (bounded), parsing it, the
// tokenizer_config.json beside it and a special token named there.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace mcpclass::tokenizers::hf {

/// The file's bytes (at most 256 MiB). Throws ClassifyError naming the file.
std::string read_text_file(const std::string& path);
/// Throws ClassifyError naming `path` for invalid JSON.
boost::json::value parse_json(const std::string& text, const std::string& path);
/// tokenizer_config.json next to `path`, when there is one (else empty).
boost::json::object sibling_config(const std::string& path);
/// A token `config` names under `key` (a string or an AddedToken object's content), else
/// `fallback`.
std::string config_token(const boost::json::object& config, const char* key, std::string fallback);

}  // namespace mcpclass::tokenizers::hf
