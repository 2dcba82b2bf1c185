// Byte-pair encoding as the reference runs it: characters (with the continuing-subword prefix and
// end-of-word suffix, byte fallback, unknown-token fusing), then merges lowest rank first, ties to
// the leftmost pair. Results per word are cached, as the reference does.
#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/models.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <mutex>
#include <queue>
#include <shared_mutex>

namespace mcpclass::tokenizers::hf {

namespace {

struct Symbol {
  std::int32_t id;
  std::int32_t prev;
  std::int32_t next;
  std::uint32_t len;
};

struct MergeEntry {
  std::int32_t rank;
  std::int32_t new_id;
};

struct Candidate {
  std::int32_t rank;
  std::int32_t pos;
  std::int32_t new_id;
  // The priority queue pops the lowest rank, then the leftmost position.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}

// A word's result: (id, byte length) per token.
using Pieces = std::vector<std::pair<std::int32_t, std::uint32_t>>;

constexpr std::size_t kCacheCapacity = 10000;
constexpr std::size_t kCacheMaxWord = 256;

class Bpe final : public VocabularyModel {
 public:
  Bpe(Vocab vocab, std::unordered_map<std::uint64_t, MergeEntry> merges,
      std::optional<std::string> unk, std::string prefix, std::string suffix, bool fuse_unk,
      bool byte_fallback, bool ignore_merges)
      : VocabularyModel(std::move(vocab)),
        merges_(std::move(merges)),
        unk_(std::move(unk)),
        prefix_(std::move(prefix)),
        suffix_(std::move(suffix)),
        fuse_unk_(fuse_unk),
        byte_fallback_(byte_fallback),
        ignore_merges_(ignore_merges) {
    if (unk_) {
      auto it = vocab_.find(std::string_view(*unk_));
      if (it != vocab_.end()) unk_id_ = it->second;
    }
  }

  void tokenize(std::string_view word, std::vector<Token>& out) const override {
    if (word.empty()) return;
    if (ignore_merges_) {
      if (auto it = vocab_.find(word); it != vocab_.end()) {
        out.push_back({it->second, it->first, 0, static_cast<std::uint32_t>(word.size())});
        return;
      }
    }
    {
      std::shared_lock lock(cache_mutex_);
      if (auto it = cache_.find(word); it != cache_.end()) return emit(it->second, out);
    }
    Pieces pieces = merge_word(word);
    emit(pieces, out);
    if (word.size() <= kCacheMaxWord) {
      std::unique_lock lock(cache_mutex_);
      if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(word), std::move(pieces));
    }
  }

 private:
  void emit(const Pieces& pieces, std::vector<Token>& out) const {
    std::uint32_t at = 0;
    for (const auto& [id, len] : pieces) {
      out.push_back({id, id_to_token(id), at, at + len});
      at += len;
    }
  }

  Pieces merge_word(std::string_view w) const {
    std::vector<Symbol> symbols;
    symbols.reserve(w.size());
    auto add = [&](std::int32_t id, std::uint32_t len) {
      const auto n = static_cast<std::int32_t>(symbols.size());
      if (n > 0) symbols.back().next = n;
      symbols.push_back({id, n - 1, -1, len});
    };
    // A pending unknown token: (id, byte length); fused with the next one when fuse_unk.
    bool have_unk = false;
    std::int32_t unk_id = 0;
    std::uint32_t unk_len = 0;
    std::string buf;
    std::size_t i = 0;
    while (i < w.size()) {
      std::size_t len = 1;
      while (i + len < w.size() && (static_cast<unsigned char>(w[i + len]) & 0xC0) == 0x80) ++len;
      const bool is_first = i == 0;
      const bool is_last = i + len == w.size();
      buf.clear();
      if (!is_first) buf += prefix_;
      buf.append(w.substr(i, len));
      if (is_last) buf += suffix_;
      const auto byte_len = static_cast<std::uint32_t>(len);
      i += len;
      if (auto it = vocab_.find(std::string_view(buf)); it != vocab_.end()) {
        if (have_unk) {
          add(unk_id, unk_len);
          have_unk = false;
        }
        add(it->second, byte_len);
        continue;
      }
      if (byte_fallback_) {
        std::vector<std::int32_t> ids;
        char code[8];
        for (unsigned char b : buf) {
          std::snprintf(code, sizeof code, "<0x%02X>", b);
          auto it = vocab_.find(std::string_view(code));
          if (it == vocab_.end()) break;
          ids.push_back(it->second);
        }
        if (ids.size() == buf.size()) {
          for (std::int32_t id : ids) add(id, 1);
          continue;
        }
      }
      if (unk_) {
        if (!unk_id_)
          throw classify::ClassifyError("BPE: the unknown token '" + *unk_ +
                                        "' is not in the vocabulary");
        if (have_unk && fuse_unk_) {
          unk_len += byte_len;
        } else {
          if (have_unk) add(unk_id, unk_len);
          have_unk = true;
          unk_id = *unk_id_;
          unk_len = byte_len;
        }
      }
    }
    if (have_unk) add(unk_id, unk_len);
    merge_all(symbols);
    Pieces out;
    for (const Symbol& s : symbols)
      if (s.len != 0) out.emplace_back(s.id, s.len);
    return out;
  }

  const MergeEntry* find_merge(std::int32_t a, std::int32_t b) const {
    auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    std::priority_queue<Candidate> queue;
    for (std::size_t k = 0; k + 1 < symbols.size(); ++k)
      if (const MergeEntry* m = find_merge(symbols[k].id, symbols[k + 1].id))
        queue.push({m->rank, static_cast<std::int32_t>(k), m->new_id});
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      const auto pos = static_cast<std::size_t>(top.pos);
      if (symbols[pos].len == 0 || symbols[pos].next == -1) continue;
      const auto next_pos = static_cast<std::size_t>(symbols[pos].next);
      const Symbol right = symbols[next_pos];
      const MergeEntry* m = find_merge(symbols[pos].id, right.id);
      if (m == nullptr || m->new_id != top.new_id) continue;  // a stale entry
      symbols[pos].id = top.new_id;
      symbols[pos].len += right.len;
      symbols[pos].next = right.next;
      symbols[next_pos].len = 0;
      if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = top.pos;
      const Symbol now = symbols[pos];
      if (now.prev >= 0)
        if (const MergeEntry* pm =
                find_merge(symbols[static_cast<std::size_t>(now.prev)].id, now.id))
          queue.push({pm->rank, now.prev, pm->new_id});
      if (now.next >= 0)
        if (const MergeEntry* nm =
                find_merge(now.id, symbols[static_cast<std::size_t>(now.next)].id))
          queue.push({nm->rank, top.pos, nm->new_id});
    }
  }

  std::unordered_map<std::uint64_t, MergeEntry> merges_;
  std::optional<std::string> unk_;
  std::optional<std::int32_t> unk_id_;
  std::string prefix_;
  std::string suffix_;
  bool fuse_unk_;
  bool byte_fallback_;
  bool ignore_merges_;
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, Pieces, StringHash, std::equal_to<>> cache_;
};

}  // namespace

std::unique_ptr<Model> make_bpe(const boost::json::object& o) {
  Vocab vocab = read_vocab(o, "BPE");
  const std::string prefix = string_field_or(o, "continuing_subword_prefix", "");
  std::unordered_map<std::uint64_t, MergeEntry> merges;
  std::int32_t rank = 0;
  for (const auto& m : array_field(o, "merges", "BPE")) {
    std::string a, b;
    if (m.is_string()) {
      const std::string s(m.get_string());
      const auto sp = s.find(' ');
      if (sp == std::string::npos)
        throw classify::ClassifyError("BPE: merge '" + s + "' has no space");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (m.is_array() && m.get_array().size() == 2 && m.get_array()[0].is_string() &&
               m.get_array()[1].is_string()) {
      a = std::string(m.get_array()[0].get_string());
      b = std::string(m.get_array()[1].get_string());
    } else {
      throw classify::ClassifyError("BPE: merge " + std::to_string(rank) +
                                    " is not a pair of strings");
    }
    auto ia = vocab.find(std::string_view(a));
    auto ib = vocab.find(std::string_view(b));
    if (ia == vocab.end() || ib == vocab.end())
      throw classify::ClassifyError("BPE: merge '" + a + " " + b +
                                    "' uses a token not in the vocabulary");
    const std::string merged =
        a + (b.compare(0, prefix.size(), prefix) == 0 ? b.substr(prefix.size()) : b);
    auto im = vocab.find(std::string_view(merged));
    if (im == vocab.end())
      throw classify::ClassifyError("BPE: the merge of '" + a + " " + b +
                                    "' is not in the vocabulary");
    merges.emplace(pair_key(ia->second, ib->second), MergeEntry{rank, im->second});
    ++rank;
  }
  std::optional<std::string> unk;
  if (const auto* u = o.if_contains("unk_token"); u != nullptr && u->is_string())
    unk = std::string(u->get_string());
  return std::make_unique<Bpe>(
      std::move(vocab), std::move(merges), std::move(unk), prefix,
      string_field_or(o, "end_of_word_suffix", ""), bool_field_or(o, "fuse_unk", false),
      bool_field_or(o, "byte_fallback", false), bool_field_or(o, "ignore_merges", false));
}

}  // namespace mcpclass::tokenizers::hf
