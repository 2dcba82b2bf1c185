// Local-first or remote-first classification with fallback.
#include "mcpclass/classify/composite_classifier.hpp"

#include "mcpclass/classify/provenance.hpp"

#include "mcpclass/classify/entropy.hpp"
#include "util/config_reader.hpp"

#include <stdexcept>

namespace mcpclass::classify {

CompositeOptions CompositeOptions::from_json(const json::value& v, const std::string& path) {
  util::strict::ObjectReader r(v, path);
  CompositeOptions o;
  if (const auto mode = r.string("mode")) {
    if (*mode == "local_first")
      o.mode = CompositeMode::local_first;
    else if (*mode == "remote_first")
      o.mode = CompositeMode::remote_first;
    else
      util::strict::fail(r.path_of("mode"), "must be local_first or remote_first");
  }
  if (const auto t = r.number("threshold")) {
    if (!(*t >= 0 && *t <= 1)) util::strict::fail(r.path_of("threshold"), "must be within [0, 1]");
    o.threshold = *t;
  }
  r.finish();
  return o;
}

CompositeClassifier::CompositeClassifier(std::shared_ptr<const Classifier> local,
                                         std::shared_ptr<const Classifier> remote,
                                         CompositeOptions options)
    : local_(std::move(local)), remote_(std::move(remote)), options_(options) {
  if (!local_ || !remote_) throw std::invalid_argument("CompositeClassifier: missing classifier");
}

Classification CompositeClassifier::map_remote(const Classification& remote) const {
  const CategorySet& local = local_->categories();
  const CategorySet& theirs = remote_->categories();
  Classification c = remote;
  c.probabilities.assign(local.size(), 0.0);
  for (std::size_t i = 0; i < remote.probabilities.size() && i < theirs.size(); ++i) {
    const auto index = local.index_of(theirs[i].name);
    if (index)
      c.probabilities[*index] += remote.probabilities[i];
    else if (remote.probabilities[i] > 0)
      throw InvalidClassification("remote category '" + theirs[i].name + "' is unknown locally");
  }
  const auto chosen = local.index_of(remote.category);
  if (!chosen)
    throw InvalidClassification("remote category '" + remote.category + "' is unknown locally");
  c.class_index = *chosen;
  c.entropy = shannon_entropy(c.probabilities);
  check_classification(c, local);
  return c;
}

std::optional<Classification> CompositeClassifier::try_remote(
    std::string_view text, const ClassifyOptions& options) const {
  try {
    Classification c = map_remote(remote_->classify(text, options));
    ++answered_remote_;
    return c;
  } catch (const ClassifyError&) {
    ++remote_failures_;
    return std::nullopt;
  } catch (const ConfigError&) {  // not a ClassifyError: e.g. the OAuth key file went unreadable
    ++remote_failures_;
    return std::nullopt;
  }
}

Classification CompositeClassifier::classify(std::string_view text,
                                             const ClassifyOptions& options) const {
  if (options_.mode == CompositeMode::remote_first) {
    if (auto r = try_remote(text, options)) return *r;
    ++answered_local_;
    Classification l = local_->classify(text, options);
    l.fallback = true;
    return l;
  }
  Classification l = local_->classify(text, options);
  if (l.confidence >= options_.threshold) {
    ++answered_local_;
    return l;
  }
  if (auto r = try_remote(text, options)) return *r;
  ++answered_local_;
  l.fallback = true;
  return l;
}

std::string CompositeClassifier::model_id() const {
  return fnv1a64_id(local_->model_id() + '\0' + remote_->model_id());
}

json::object CompositeClassifier::info() const {
  json::object local = local_->info();
  json::object out{
      {"kind", "composite"},
      {"mode", options_.mode == CompositeMode::local_first ? "local_first" : "remote_first"},
      {"threshold", options_.threshold},
      {"model", local.contains("model") ? local["model"] : json::value("")},
      {"index_size", local.contains("index_size") ? local["index_size"] : json::value(0)},
      {"answered_local", answered_local_.load()},
      {"answered_remote", answered_remote_.load()},
      {"remote_failures", remote_failures_.load()}};
  out["local"] = std::move(local);
  out["remote"] = remote_->info();
  return out;
}

}  // namespace mcpclass::classify
