#include "learned/knn_index.hpp"
#include "learned/vector_index.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <hnswlib/hnswlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <shared_mutex>
#include <sstream>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

constexpr std::size_t kM = 16;
constexpr std::size_t kEfConstruction = 200;
constexpr std::size_t kEfSearch = 64;
constexpr int kFormat = 1;

json::object key_to_json(const KnnIndexKey& key) {
  json::array cats;
  for (const auto& c : key.categories) cats.emplace_back(c);
  return {{"model_id", key.model_id}, {"examples_id", key.examples_id}, {"categories", cats}};
}

void fsync_path(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb+");
  if (f == nullptr) throw ClassifyError("cannot reopen '" + path + "'");
  const bool ok = ::fsync(::fileno(f)) == 0;
  std::fclose(f);
  if (!ok) throw ClassifyError("cannot sync '" + path + "'");
}

// The bytes hnswlib's saveIndex() writes for `g` (its header, the level-0 data, then each
// element's upper-level link list behind a 4-byte length). saveIndex() checks no stream state, so
// comparing the file's size with this is how a short write (disk full, file size limit) shows.
std::uintmax_t saved_size(const hnswlib::HierarchicalNSW<float>& g) {
  std::uintmax_t n = sizeof g.offsetLevel0_ + sizeof g.max_elements_ + sizeof g.cur_element_count +
                     sizeof g.size_data_per_element_ + sizeof g.label_offset_ +
                     sizeof g.offsetData_ + sizeof g.maxlevel_ + sizeof g.enterpoint_node_ +
                     sizeof g.maxM_ + sizeof g.maxM0_ + sizeof g.M_ + sizeof g.mult_ +
                     sizeof g.ef_construction_;
  n += static_cast<std::uintmax_t>(g.cur_element_count) * g.size_data_per_element_;
  for (std::size_t i = 0; i < g.cur_element_count; ++i) {
    n += sizeof(unsigned int);
    if (g.element_levels_[i] > 0)
      n += g.size_links_per_element_ * static_cast<std::size_t>(g.element_levels_[i]);
  }
  return n;
}

}  // namespace

struct KnnIndex::Impl {
  Impl(std::size_t dim, KnnIndexKey k) : dimension(dim), key(std::move(k)), space(dim) {}
  std::size_t dimension;
  KnnIndexKey key;
  hnswlib::InnerProductSpace space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph;
  std::vector<std::size_t> labels;  ///< Class index of each element, by element id.
  mutable std::shared_mutex mutex;

  void make_graph(std::size_t capacity) {
    graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        &space, std::max<std::size_t>(capacity, 16), kM, kEfConstruction);
    graph->setEf(kEfSearch);
  }
};

KnnIndex::KnnIndex(std::size_t dimension, KnnIndexKey key)
    : impl_(std::make_unique<Impl>(dimension, std::move(key))) {
  if (dimension == 0) throw ClassifyError("kNN index dimension must be positive");
  impl_->make_graph(1024);
}

KnnIndex::~KnnIndex() = default;

void KnnIndex::add(std::span<const float> vectors, std::span<const std::size_t> categories) {
  if (vectors.size() != categories.size() * impl_->dimension)
    throw ClassifyError("kNN index: vector data does not match the number of labels");
  for (const auto c : categories)
    if (c >= impl_->key.categories.size()) throw ClassifyError("kNN index: category out of range");
  std::unique_lock lock(impl_->mutex);
  const std::size_t needed = impl_->labels.size() + categories.size();
  if (needed > impl_->graph->max_elements_)
    impl_->graph->resizeIndex(std::max(needed, 2 * impl_->graph->max_elements_));
  for (std::size_t i = 0; i < categories.size(); ++i) {
    impl_->graph->addPoint(vectors.data() + i * impl_->dimension, impl_->labels.size());
    impl_->labels.push_back(categories[i]);
  }
}

std::vector<Neighbour> KnnIndex::search(std::span<const float> query, std::size_t k) const {
  if (query.size() != impl_->dimension) throw ClassifyError("kNN query has the wrong dimension");
  std::shared_lock lock(impl_->mutex);
  k = std::min(k, impl_->labels.size());
  std::vector<Neighbour> out;
  if (k == 0) return out;
  auto result = impl_->graph->searchKnn(query.data(), k);
  out.resize(result.size());
  // The queue pops the farthest first; hnswlib's inner-product distance is 1 - dot.
  for (std::size_t i = out.size(); i-- > 0; result.pop()) {
    const auto [distance, label] = result.top();
    out[i] = {impl_->labels.at(label), 1.0 - static_cast<double>(distance)};
  }
  return out;
}

std::size_t KnnIndex::size() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->labels.size();
}

std::size_t KnnIndex::dimension() const {
  return impl_->dimension;
}

const KnnIndexKey& KnnIndex::key() const {
  return impl_->key;
}

void KnnIndex::save(const std::string& path) const {
  std::unique_lock lock(impl_->mutex);
  std::error_code ec;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  const std::string tmp = temporary_path(path);
  // Until the renames, nothing of the previous index is touched: any failure leaves it whole.
  try {
    impl_->graph->saveIndex(tmp);
    const auto expected = saved_size(*impl_->graph);
    const auto written = std::filesystem::file_size(tmp, ec);
    if (ec || written != expected)
      throw ClassifyError("cannot write kNN index '" + path + "': wrote " +
                          std::to_string(ec ? 0 : written) + " of " + std::to_string(expected) +
                          " bytes (disk full or file size limit?); the previous index is kept");
    fsync_path(tmp);
  } catch (const ClassifyError&) {
    std::filesystem::remove(tmp, ec);
    throw;
  } catch (const std::exception& e) {
    std::filesystem::remove(tmp, ec);
    throw ClassifyError("cannot write kNN index '" + path + "': " + e.what());
  }
  json::array labels;
  for (const auto l : impl_->labels) labels.emplace_back(l);
  json::object manifest{{"format", kFormat},
                        {"dimension", impl_->dimension},
                        {"count", impl_->labels.size()},
                        {"key", key_to_json(impl_->key)},
                        {"graph_checksum", file_checksum(tmp)},
                        {"labels", std::move(labels)}};
  // Both files are written before either replaces its predecessor. Graph first: a crash between
  // the two renames leaves a manifest whose checksum no longer matches, which load() reports as
  // stale and the caller rebuilds.
  const std::string manifest_tmp = temporary_path(path + ".json");
  try {
    write_file_atomically(manifest_tmp, json::serialize(manifest));
  } catch (const ClassifyError& e) {
    std::filesystem::remove(tmp, ec);
    throw ClassifyError("cannot write kNN index manifest '" + path + ".json' (" + e.what() +
                        "); the previous index is kept");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(tmp, ec);
    std::filesystem::remove(manifest_tmp, ec);
    throw ClassifyError("cannot rename '" + tmp + "' to '" + path + "'");
  }
  if (std::rename(manifest_tmp.c_str(), (path + ".json").c_str()) != 0) {
    std::filesystem::remove(manifest_tmp, ec);
    throw ClassifyError("cannot rename '" + manifest_tmp + "' to '" + path + ".json'");
  }
}

std::unique_ptr<KnnIndex> KnnIndex::load(const std::string& path, std::size_t dimension,
                                         const KnnIndexKey& key, std::string* why) {
  auto stale = [&](const std::string& reason) -> std::unique_ptr<KnnIndex> {
    if (why != nullptr) *why = reason;
    return nullptr;
  };
  std::ifstream in(path + ".json", std::ios::binary);
  if (!in) return stale("no index at '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  boost::system::error_code ec;
  const auto doc = json::parse(buf.str(), ec);
  if (ec || !doc.is_object()) return stale("index manifest is not valid JSON");
  const auto& m = doc.as_object();
  try {
    if (m.at("format").to_number<int>() != kFormat) return stale("index format changed");
    if (m.at("dimension").to_number<std::size_t>() != dimension)
      return stale("encoder dimension changed");
    if (json::value(key_to_json(key)) != m.at("key"))
      return stale("model, examples or categories changed");
    if (!std::filesystem::exists(path)) return stale("index graph missing");
    if (file_checksum(path) != m.at("graph_checksum").as_string())
      return stale("index graph does not match its manifest (damaged or interrupted write)");
    auto index = std::make_unique<KnnIndex>(dimension, key);
    const auto& labels = m.at("labels").as_array();
    if (labels.size() != m.at("count").to_number<std::size_t>())
      return stale("label count mismatch");
    for (const auto& l : labels) {
      const auto c = l.to_number<std::size_t>();
      if (c >= key.categories.size()) return stale("label out of range");
      index->impl_->labels.push_back(c);
    }
    index->impl_->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        &index->impl_->space, path, false, std::max<std::size_t>(labels.size(), 16));
    index->impl_->graph->setEf(kEfSearch);
    if (index->impl_->graph->cur_element_count != labels.size())
      return stale("index graph size does not match its manifest");
    return index;
  } catch (const std::exception& e) {
    return stale(std::string("index unreadable: ") + e.what());
  }
}

}  // namespace mcpclass::learned

namespace mcpclass::learned {

namespace {
constexpr std::size_t kVectorIndexCapacity = 256;
constexpr std::size_t kVectorIndexEfConstruction = 100;
}  // namespace

struct VectorIndex::Impl {
  explicit Impl(std::size_t dim)
      : dimension(dim),
        space(dim),
        graph(&space, kVectorIndexCapacity, kM, kVectorIndexEfConstruction) {
    graph.setEf(kEfSearch);
  }
  std::size_t dimension;
  hnswlib::InnerProductSpace space;
  hnswlib::HierarchicalNSW<float> graph;
  std::size_t elements = 0;  // added, removed ones included
  std::size_t live = 0;
};

VectorIndex::VectorIndex(std::size_t dimension) : impl_(std::make_unique<Impl>(dimension)) {
  if (dimension == 0) throw ClassifyError("vector index dimension must be positive");
}

VectorIndex::~VectorIndex() = default;

void VectorIndex::add(std::uint64_t id, std::span<const float> vector) {
  if (vector.size() != impl_->dimension)
    throw ClassifyError("vector index: a vector has the wrong dimension");
  auto& g = impl_->graph;
  if (impl_->elements + 1 > g.max_elements_) g.resizeIndex(2 * g.max_elements_);
  g.addPoint(vector.data(), static_cast<hnswlib::labeltype>(id));
  ++impl_->elements;
  ++impl_->live;
}

bool VectorIndex::remove(std::uint64_t id) {
  try {
    impl_->graph.markDelete(static_cast<hnswlib::labeltype>(id));
  } catch (const std::runtime_error&) {
    return false;  // hnswlib: no such label
  }
  --impl_->live;
  return true;
}

std::vector<std::pair<std::uint64_t, double>> VectorIndex::search(std::span<const float> query,
                                                                  std::size_t k) const {
  std::vector<std::pair<std::uint64_t, double>> out;
  k = std::min(k, impl_->live);
  if (k == 0 || query.size() != impl_->dimension) return out;
  auto result = impl_->graph.searchKnn(query.data(), k);
  out.resize(result.size());
  // The queue pops the farthest first; the inner-product distance is 1 - dot.
  for (std::size_t i = out.size(); i-- > 0; result.pop())
    out[i] = {result.top().second, 1.0 - static_cast<double>(result.top().first)};
  return out;
}

}  // namespace mcpclass::learned
