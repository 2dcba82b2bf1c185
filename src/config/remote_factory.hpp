// Internal: `classifier.kind: remote` and `composite` from the raw `classifier` section.
//   classifier:
//     kind: remote            # or composite
//     remote: {url: http://127.0.0.1:8090/mcp, timeout: 5, ...}   # RemoteClassifierOptions
//     composite: {mode: local_first, threshold: 0.6}             # composite only
//     rules: {...}            # composite only: the local rule classifier
// and `token_classifier.remote` (the span tool of another server).
#pragma once

#include "mcpclass/config/config.hpp"

#include <boost/json.hpp>

#include <memory>

namespace mcpclass::config::detail {

/// Removes `remote` and `composite` from a raw `classifier` section (so the rest is a RuleSet)
/// and returns them as an object (possibly empty).
json::object take_remote_sections(json::object& classifier_section);

/// Validates the sections taken above for `kind`; throws ConfigError naming the key.
void check_remote_sections(std::string_view kind, const json::object& sections);

/// The remote (or composite: rules + remote) classifier. Connects to the server.
/// Throws ConfigError or remote::RemoteError.
std::unique_ptr<classify::Classifier> make_remote_classifier(const Config& config,
                                                             const json::object& sections);

/// A `token_classifier` section: a checkpoint's settings, or with `remote` (checked as
/// RemoteClassifierOptions) only the served `tool` and the raw remote object.
struct TokenClassifierSection {
  learned::TokenClassifierSettings settings;
  json::object remote;
};
/// Throws ConfigError naming the key (`token_classifier.model` with `remote`, say).
TokenClassifierSection take_remote_token_classifier(const json::value& section);

}  // namespace mcpclass::config::detail
