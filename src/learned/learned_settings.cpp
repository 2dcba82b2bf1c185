#include "mcpclass/learned/learned_settings.hpp"

#include "checkpoint/checkpoint_config.hpp"
#include "learned/precision_setting.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/learned/hub_cache.hpp"
#include "mcpclass/util/fnv1a.hpp"
#include "util/config_reader.hpp"
#include "util/env_value.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>
#include <utility>

namespace mcpclass::learned {

using classify::Category;
using classify::CategorySet;
using classify::ClassifyError;

namespace {

// `batching` {max_batch, max_wait_us, max_running} of trained_head and transformer.
void read_batching(util::strict::ObjectReader& r, classify::BatchingOptions& out) {
  const auto* b = r.get("batching");
  if (b == nullptr) return;
  util::strict::ObjectReader br(*b, r.path_of("batching"));
  if (const auto v = br.integer("max_batch")) {
    if (*v < 1 || *v > 1024)
      util::strict::fail(br.path_of("max_batch"), "must be an integer in [1, 1024]");
    out.max_batch = static_cast<std::size_t>(*v);
  }
  if (const auto v = br.integer("max_wait_us")) {
    if (*v < 0 || *v > 1'000'000)
      util::strict::fail(br.path_of("max_wait_us"), "must be an integer in [0, 1000000]");
    out.max_wait = std::chrono::microseconds(*v);
  }
  if (const auto v = br.integer("max_running")) {
    if (*v < 0 || *v > 256)
      util::strict::fail(br.path_of("max_running"), "must be an integer in [0, 256]");
    out.max_running = static_cast<std::size_t>(*v);
  }
  br.finish();
}

json::object batching_json(const classify::BatchingOptions& b) {
  return {{"max_batch", b.max_batch},
          {"max_wait_us", b.max_wait.count()},
          {"max_running", b.max_running}};
}

constexpr std::pair<EncoderPrecision, const char*> kPrecisionNames[] = {
    {EncoderPrecision::automatic, "auto"},
    {EncoderPrecision::bf16, "bf16"},
    {EncoderPrecision::f32, "f32"},
    {EncoderPrecision::int8, "int8"}};

}  // namespace

const char* precision_name(EncoderPrecision p) {
  for (const auto& [value, name] : kPrecisionNames)
    if (value == p) return name;
  return "auto";
}

std::optional<EncoderPrecision> parse_precision(std::string_view text) {
  for (const auto& [value, name] : kPrecisionNames)
    if (text == name) return value;
  return std::nullopt;
}

namespace detail {

EncoderPrecision read_precision(util::strict::ObjectReader& r, EncoderPrecision fallback) {
  const auto text = r.string("precision");
  if (!text) return fallback;
  const auto parsed = parse_precision(*text);
  if (!parsed)
    util::strict::fail(r.path_of("precision"),
                       "must be auto, f32, bf16 or int8 (got '" + *text + "')");
  return *parsed;
}

}  // namespace detail

bool is_learned_kind(std::string_view kind) {
  return kind == "embedding_knn" || kind == "trained_head" || kind == "torchscript" ||
         kind == "transformer";
}

std::optional<std::string> task_name_problem(std::string_view name) {
  // The name is also a tool's (classify_<name>) and a path's (/classify/<name>).
  const bool valid = !name.empty() && name.size() <= 48 &&
                     name.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_-") == std::string_view::npos;
  if (!valid)
    return "a task name is 1 to 48 letters, digits, '_' or '-' (its tool is classify_<name>)";
  // classify_text is the served task's tool; /classify/spans the token classifier's path.
  if (name == "text" || name == "spans")
    return "'" + std::string(name) +
           "' is reserved: a task's tool is classify_<name> and its HTTP path /classify/<name>, "
           "and classify_text and /classify/spans are taken";
  return std::nullopt;
}

LearnedSettings LearnedSettings::from_json(const json::object& obj, std::string_view kind,
                                           const std::string& path) {
  const json::value document(obj);  // ObjectReader keeps a reference: no temporaries
  util::strict::ObjectReader r(document, path);
  LearnedSettings s;
  auto non_empty = [&](std::string_view key, std::string& out) {
    if (auto v = r.string(key)) {
      if (v->empty()) util::strict::fail(r.path_of(key), "must not be empty");
      out = std::move(*v);
    }
  };
  auto positive = [&](std::string_view key, std::size_t& out, std::int64_t max) {
    if (const auto v = r.integer(key)) {
      if (*v <= 0 || *v > max)
        util::strict::fail(r.path_of(key),
                           "must be an integer in [1, " + std::to_string(max) + "]");
      out = static_cast<std::size_t>(*v);
    }
  };
  non_empty("encoder", s.encoder);
  non_empty("tokenizer", s.tokenizer);
  positive("max_tokens", s.max_tokens, 4096);
  positive("threads", s.threads, 256);
  s.precision = detail::read_precision(r, s.precision);
  non_empty("kernels", s.kernels);
  if (kind == "embedding_knn" || kind == "trained_head") {
    positive("layers", s.layers, 1000);
    positive("dimensions", s.dimensions, 65'536);
    non_empty("prompt", s.prompt);
  }
  if (kind == "embedding_knn") {
    non_empty("examples", s.examples);
    non_empty("index", s.index);
    positive("k", s.k, 1000);
    if (const auto t = r.number("temperature")) {
      if (!(*t > 0.0 && *t <= 100.0))
        util::strict::fail(r.path_of("temperature"), "must be in (0, 100]");
      s.temperature = *t;
    }
    if (s.examples.empty())
      util::strict::fail(r.path_of("examples"), "is required for embedding_knn");
  } else if (kind == "trained_head") {
    read_batching(r, s.batching);
    s.temperature = 0.0;
    non_empty("head", s.head);
    if (const auto t = r.number("temperature")) {
      if (!(*t >= 0.0 && *t <= 100.0))
        util::strict::fail(r.path_of("temperature"), "must be in [0, 100]");
      s.temperature = *t;
    }
    if (s.head.empty()) util::strict::fail(r.path_of("head"), "is required for trained_head");
  } else if (kind == "torchscript") {
    non_empty("model", s.model);
    non_empty("labels", s.labels);
    if (s.model.empty()) util::strict::fail(r.path_of("model"), "is required for torchscript");
  } else if (kind == "transformer") {
    non_empty("model", s.model);
    non_empty("adapter", s.adapter);
    if (s.model.empty()) util::strict::fail(r.path_of("model"), "is required for transformer");
    if (const auto* adapters = r.get("adapters")) {
      const auto where = r.path_of("adapters");
      if (!adapters->is_object() || adapters->get_object().empty())
        util::strict::fail(where, "must be a non-empty map of task names to adapter directories");
      if (!s.adapter.empty())
        util::strict::fail(where, "excludes adapter (one adapter merged into the model)");
      for (const auto& kv : adapters->get_object()) {
        const std::string name(kv.key());
        if (auto problem = task_name_problem(name))
          util::strict::fail(where + "." + name, *problem);
        if (!kv.value().is_string() || kv.value().get_string().empty())
          util::strict::fail(where + "." + name, "must be an adapter directory");
        s.adapters.emplace_back(name, std::string(kv.value().get_string()));
      }
      non_empty("task", s.task);
      if (s.task.empty()) s.task = s.adapters.front().first;
      if (std::none_of(s.adapters.begin(), s.adapters.end(),
                       [&](const auto& a) { return a.first == s.task; }))
        util::strict::fail(r.path_of("task"), "'" + s.task + "' is not one of adapters' tasks");
    }
    if (const auto merge = r.boolean("merge_adapters")) {
      if (s.adapters.empty())
        util::strict::fail(r.path_of("merge_adapters"),
                           "applies to adapters: {task: DIR} (one adapter: adapter:)");
      s.merge_adapters = *merge;
    }
    // Concurrent calls share forward passes by default (batching_classifier.hpp): a lone call
    // never waits, and max_running 0 (cores ÷ threads, at load) keeps the cores busy without
    // one thread team per request.
    s.batching = {.max_batch = 8, .max_wait = std::chrono::microseconds(0), .max_running = 0};
    read_batching(r, s.batching);
  } else {
    util::strict::fail(util::strict::member_path(path, "kind"), "unknown learned classifier kind");
  }
  r.finish();
  return s;
}

classify::BatchingOptions LearnedSettings::batching_at_load() const {
  auto out = batching;
  if (out.max_running == 0)
    out.max_running = std::max<std::size_t>(
        1, std::thread::hardware_concurrency() / std::max<std::size_t>(threads, 1));
  return out;
}

std::size_t LearnedSettings::batching_callers() const {
  if (batching.max_batch < 2) return 0;
  return batching.max_batch * (batching_at_load().max_running + 1);
}

json::object LearnedSettings::to_json(std::string_view kind) const {
  json::object o{{"encoder", encoder},
                 {"tokenizer", tokenizer},
                 {"max_tokens", max_tokens},
                 {"threads", threads}};
  if (precision != EncoderPrecision::automatic) o["precision"] = precision_name(precision);
  if (!kernels.empty()) o["kernels"] = kernels;
  if (layers != 0) o["layers"] = layers;
  if (dimensions != 0) o["dimensions"] = dimensions;
  if (!prompt.empty()) o["prompt"] = prompt;
  if (kind == "embedding_knn") {
    o["examples"] = examples;
    if (!index.empty()) o["index"] = index;
    o["k"] = k;
    o["temperature"] = temperature;
  } else if (kind == "trained_head") {
    o["head"] = head;
    o["temperature"] = temperature;
    if (batching.max_batch > 1) o["batching"] = batching_json(batching);
  } else if (kind == "torchscript") {
    o["model"] = model;
    if (!labels.empty()) o["labels"] = labels;
  } else if (kind == "transformer") {
    o["model"] = model;
    if (!adapter.empty()) o["adapter"] = adapter;
    if (!adapters.empty()) {
      json::object a;
      for (const auto& [name, dir] : adapters) a[name] = dir;
      o["adapters"] = std::move(a);
      o["task"] = task;
      o["merge_adapters"] = merge_adapters;
    }
    o["batching"] = batching_json(batching);
  }
  return o;
}

CategorySet checkpoint_categories(const LearnedSettings& settings) {
  for (const auto& [name, dir] : settings.adapters)
    if (name == settings.task &&
        std::filesystem::exists(std::filesystem::path(resolve_model_path(dir)) / "config.json"))
      return checkpoint_categories(dir);
  return checkpoint_categories(settings.model);
}

CategorySet checkpoint_categories(std::string_view model_dir) {
  const auto dir = resolve_model_path(model_dir);
  const auto labels =
      checkpoint::checkpoint_labels(checkpoint::read_checkpoint_config(dir), dir + "/config.json");
  std::vector<Category> categories;
  for (const auto& l : labels) {
    Category c;
    c.name = l;
    c.description = l;
    categories.push_back(std::move(c));
  }
  return CategorySet(std::move(categories));
}

std::string learned_cache_dir() {
  if (auto dir = util::env_value("MCPCLASS_CACHE_DIR"); !dir.empty()) return dir;
  if (auto xdg = util::env_value("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/mcpclass";
  if (auto home = util::env_value("HOME"); !home.empty()) return home + "/.cache/mcpclass";
  return ".mcpclass-cache";
}

std::string resolve_model_path(std::string_view path) {
  constexpr std::string_view prefix = "cache:";
  if (path.starts_with(prefix))
    return learned_cache_dir() + "/" + std::string(path.substr(prefix.size()));
  constexpr std::string_view hub = "hf://";
  if (path.starts_with(hub)) {
    const auto repo = parse_hub_repo(path.substr(hub.size()));
    const auto cache = hub_cache_dir();
    if (auto snapshot = hub_snapshot(cache, repo)) return *snapshot;
    throw ClassifyError("'" + std::string(path) + "' is not in the Hugging Face cache (" + cache +
                        "): run `mcpclass model pull " + std::string(path.substr(hub.size())) +
                        "` first (a configuration never downloads)");
  }
  return std::string(path);
}

std::string text_checksum(std::string_view data) {
  util::Fnv1a64 h;
  h.mix(data);
  return h.hex();
}

std::string file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError("cannot read '" + path + "'");
  util::Fnv1a64 h;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.mix(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw ClassifyError("cannot read '" + path + "'");
  return h.hex();
}

std::string files_id(const std::vector<std::string>& paths) {
  std::string checksums;
  for (const auto& path : paths)
    if (!path.empty() && std::filesystem::is_regular_file(path))
      checksums += path.substr(path.find_last_of('/') + 1) + ':' + file_checksum(path) + '\n';
  return checksums.empty() ? std::string() : classify::fnv1a64_id(checksums);
}

std::string temporary_path(const std::string& path) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random()));
  return path + ".tmp." + std::to_string(::getpid()) + "." + suffix;
}

void write_file_atomically(const std::string& path, std::string_view data) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = temporary_path(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw ClassifyError("cannot write '" + tmp + "'");
  const bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw ClassifyError("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw ClassifyError("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

}  // namespace mcpclass::learned
