#include "learned/length_batches.hpp"

#include <malloc.h>

#include <algorithm>
#include <numeric>

namespace mcpclass::learned::detail {

std::vector<float> encode_by_length(const std::vector<std::vector<std::int32_t>>& ids,
                                    std::size_t dimension, std::size_t batch_size,
                                    const std::function<std::size_t(std::size_t)>& max_texts,
                                    bool trim_each_batch,
                                    const std::function<std::vector<float>(TokenRows)>& forward,
                                    const EncodeProgress& progress) {
  std::vector<std::size_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ids[a].size() < ids[b].size(); });
  std::vector<float> out(ids.size() * dimension);
  for (std::size_t start = 0, end = 0; start < order.size(); start = end) {
    end = std::min(order.size(), start + batch_size);
    if (max_texts)  // sorted by length: the last text is the widest
      end = std::min(end, start + std::max<std::size_t>(1, max_texts(ids[order[end - 1]].size())));
    std::vector<const std::vector<std::int32_t>*> batch;
    for (std::size_t i = start; i < end; ++i) batch.push_back(&ids[order[i]]);
    const auto result = forward(batch);
    for (std::size_t i = start; i < end; ++i)
      std::copy_n(result.data() + (i - start) * dimension, dimension,
                  out.data() + order[i] * dimension);
#ifdef __GLIBC__
    // Large batches raise glibc's mmap threshold, after which their freed activations stay in
    // the heap: 2,048 questions in batches of 64 left 1.1 GB resident (peak 1.3 GB) with the
    // TorchScript encoder without this; 235 MB (peak 0.58 GB) with it.
    if (trim_each_batch && order.size() > batch_size) ::malloc_trim(0);
#endif
    if (progress) progress(end, ids.size());
  }
#ifdef __GLIBC__
  if (!trim_each_batch && order.size() > batch_size) ::malloc_trim(0);
#endif
  return out;
}

std::vector<float> TokenSentenceEncoder::encode(std::span<const std::string> texts,
                                                const EncodeProgress& progress) const {
  std::vector<std::vector<std::int32_t>> ids;
  ids.reserve(texts.size());
  for (const auto& t : texts) ids.push_back(token_ids(t));
  return encode_ids(ids, progress);
}

std::vector<float> TokenSentenceEncoder::encode_tokens(
    std::span<const std::vector<std::int32_t>> ids) const {
  std::vector<std::vector<std::int32_t>> rows(ids.begin(), ids.end());
  for (auto& r : rows)
    if (r.size() > max_tokens()) r.resize(max_tokens());
  return encode_ids(rows, {});
}

}  // namespace mcpclass::learned::detail
