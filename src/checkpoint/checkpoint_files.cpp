#include "checkpoint/checkpoint_files.hpp"

#include "checkpoint/lora_adapter.hpp"

#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

namespace mcpclass::checkpoint {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// An index is a few hundred bytes per tensor; this bounds a corrupt or hostile one.
constexpr std::uintmax_t kMaxIndexBytes = 16 * 1024 * 1024;

// Bytes read of all the files a checkpoint load reads, for its progress callback.
struct ByteCount {
  const CheckpointProgress& report;
  std::size_t done = 0, total = 0;

  void add_file(const fs::path& p) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (!ec) total += static_cast<std::size_t>(size);
  }
  std::function<void(std::uint64_t)> on_tensor() {
    if (!report) return {};
    return [this](std::uint64_t bytes) {
      done += static_cast<std::size_t>(bytes);
      report(done, std::max(done, total));
    };
  }
};

CheckpointTensors read_sharded(const fs::path& index_path, ByteCount& count) {
  const auto index = index_path.string();
  std::error_code ec;
  const auto size = fs::file_size(index_path, ec);
  if (ec || size > kMaxIndexBytes)
    throw classify::ClassifyError("'" + index + "' is missing or larger than 16 MiB");
  std::ifstream in(index_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  boost::system::error_code jec;
  const auto doc = json::parse(text, jec);
  const auto* map = (jec || !doc.is_object()) ? nullptr : doc.as_object().if_contains("weight_map");
  if (map == nullptr || !map->is_object())
    throw classify::ClassifyError("'" + index + "' has no weight_map object");
  std::map<std::string, std::set<std::string>> wanted;  // shard → its tensors
  for (const auto& [name, shard] : map->as_object()) {
    const auto* s = shard.if_string();
    if (s == nullptr || s->empty() || fs::path(std::string(*s)).has_parent_path() || *s == "..")
      throw classify::ClassifyError("'" + index + "' maps tensor '" + std::string(name) +
                                    "' to no shard file in its directory");
    wanted[std::string(*s)].insert(std::string(name));
  }
  CheckpointTensors out;
  out.description = index;
  for (const auto& [shard, names] : wanted) count.add_file(index_path.parent_path() / shard);
  for (const auto& [shard, names] : wanted) {
    const auto path = (index_path.parent_path() / shard).string();
    auto file = read_safetensors(path, count.on_tensor());
    for (const auto& name : names) {
      auto it = file.tensors.find(name);
      if (it == file.tensors.end())
        throw classify::ClassifyError("'" + path + "' has no tensor '" + name + "' (listed in '" +
                                      index + "')");
      out.file_of[name] = path;
      out.tensors.tensors.emplace(name, std::move(it->second));
    }
  }
  return out;
}

}  // namespace

const SafeTensor& CheckpointTensors::require(const std::string& name,
                                             const std::vector<std::int64_t>& shape) const {
  const auto it = file_of.find(name);
  const auto& file = it == file_of.end() ? description : it->second;
  const auto& t = tensors.require(name, shape, file);
  for (const float v : t.values)
    if (!std::isfinite(v))
      throw classify::ClassifyError("'" + file + "' tensor '" + name + "' holds non-finite values");
  return t;
}

std::vector<float> CheckpointTensors::take(const std::string& name,
                                           const std::vector<std::int64_t>& shape) {
  require(name, shape);
  return std::move(tensors.tensors.at(name).values);
}

namespace {

CheckpointTensors read_base_tensors(const std::string& dir, ByteCount& count) {
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (!fs::exists(single)) {
    if (fs::exists(index)) return read_sharded(index, count);
    throw classify::ClassifyError("'" + dir + "' has neither model.safetensors nor " +
                                  "model.safetensors.index.json");
  }
  CheckpointTensors out;
  out.description = single.string();
  count.add_file(single);
  out.tensors = read_safetensors(out.description, count.on_tensor());
  for (const auto& [name, t] : out.tensors.tensors) out.file_of[name] = out.description;
  return out;
}

}  // namespace

CheckpointTensors read_checkpoint_tensors(const std::string& dir, const std::string& adapter_dir,
                                          const CheckpointProgress& progress) {
  ByteCount count{progress};
  const auto adapter_file = fs::path(adapter_dir) / "adapter_model.safetensors";
  if (!adapter_dir.empty()) count.add_file(adapter_file);
  auto out = read_base_tensors(dir, count);
  if (!adapter_dir.empty()) merge_lora_adapter(adapter_dir, out, count.on_tensor());
  if (progress) progress(count.total, count.total);  // headers are not counted on the way
  return out;
}

}  // namespace mcpclass::checkpoint
