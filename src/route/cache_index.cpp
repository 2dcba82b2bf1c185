#include "route/cache_index.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#if MCPCLASS_WITH_LEARNED
#include "learned/vector_index.hpp"
#endif

namespace mcpclass::route {

namespace {
constexpr std::size_t kStaleSlack = 1024;
}

#if MCPCLASS_WITH_LEARNED

struct CacheIndex::Impl {
  explicit Impl(std::size_t dimension) : index(dimension) {}
  learned::VectorIndex index;
};

CacheIndex::CacheIndex(std::size_t dimension)
    : dimension_(dimension), impl_(std::make_unique<Impl>(dimension)) {}

void CacheIndex::add(std::uint64_t id, std::span<const float> vector) {
  if (vector.size() != dimension_) throw std::invalid_argument("cache index: wrong dimension");
  impl_->index.add(id, vector);
  ++live_;
}

void CacheIndex::remove(std::uint64_t id) {
  if (!impl_->index.remove(id)) return;
  --live_;
  ++removed_;
}

std::vector<std::pair<std::uint64_t, double>> CacheIndex::search(std::span<const float> query,
                                                                 std::size_t k) const {
  return impl_->index.search(query, k);
}

void CacheIndex::clear() {
  impl_ = std::make_unique<Impl>(dimension_);
  live_ = removed_ = 0;
}

#else

struct CacheIndex::Impl {
  std::unordered_map<std::uint64_t, std::vector<float>> vectors;
};

CacheIndex::CacheIndex(std::size_t dimension)
    : dimension_(dimension), impl_(std::make_unique<Impl>()) {}

void CacheIndex::add(std::uint64_t id, std::span<const float> vector) {
  if (vector.size() != dimension_) throw std::invalid_argument("cache index: wrong dimension");
  impl_->vectors[id].assign(vector.begin(), vector.end());
  live_ = impl_->vectors.size();
}

void CacheIndex::remove(std::uint64_t id) {
  impl_->vectors.erase(id);
  live_ = impl_->vectors.size();
}

std::vector<std::pair<std::uint64_t, double>> CacheIndex::search(std::span<const float> query,
                                                                 std::size_t k) const {
  std::vector<std::pair<std::uint64_t, double>> out;
  if (query.size() != dimension_) return out;
  for (const auto& [id, v] : impl_->vectors) {
    double dot = 0;
    for (std::size_t i = 0; i < v.size(); ++i) dot += double(v[i]) * query[i];
    out.emplace_back(id, dot);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.size() > k) out.resize(k);
  return out;
}

void CacheIndex::clear() {
  impl_->vectors.clear();
  live_ = removed_ = 0;
}

#endif

CacheIndex::~CacheIndex() = default;

bool CacheIndex::stale() const noexcept {
  return removed_ > live_ && removed_ > kStaleSlack;
}

}  // namespace mcpclass::route
