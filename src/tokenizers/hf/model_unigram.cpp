// Unigram: the Viterbi best segmentation under the pieces' log-probabilities (sentencepiece's
// algorithm as the reference implements it): a character no piece covers costs the lowest score
// less 10, and consecutive unknown characters fuse into one unknown token.
#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/models.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <limits>

namespace mcpclass::tokenizers::hf {

namespace {

constexpr double kUnkPenalty = 10.0;

class Unigram final : public Model {
 public:
  Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<std::int32_t> unk_id,
          bool byte_fallback)
      : pieces_(std::move(pieces)), unk_id_(unk_id), byte_fallback_(byte_fallback) {
    min_score_ = std::numeric_limits<double>::max();
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      ids_.emplace(pieces_[i].first, static_cast<std::int32_t>(i));
      max_len_ = std::max(max_len_, pieces_[i].first.size());
      min_score_ = std::min(min_score_, pieces_[i].second);
    }
  }

  void tokenize(std::string_view s, std::vector<Token>& out) const override {
    struct Node {
      std::int32_t id = -1;
      double score = 0;
      std::int64_t starts_at = -1;
    };
    const double unk_score = min_score_ - kUnkPenalty;
    std::vector<Node> best(s.size() + 1);
    std::size_t start = 0;
    while (start < s.size()) {
      const double here = best[start].score;
      std::size_t mblen = 1;
      while (start + mblen < s.size() &&
             (static_cast<unsigned char>(s[start + mblen]) & 0xC0) == 0x80)
        ++mblen;
      bool single = false;
      const std::size_t limit = std::min(s.size(), start + max_len_);
      for (std::size_t end = start + 1; end <= limit; ++end) {
        auto it = ids_.find(s.substr(start, end - start));
        if (it == ids_.end()) continue;
        Node& target = best[end];
        const double cand = pieces_[static_cast<std::size_t>(it->second)].second + here;
        if (target.starts_at < 0 || cand > target.score) {
          target.score = cand;
          target.starts_at = static_cast<std::int64_t>(start);
          target.id = it->second;
        }
        if (end - start == mblen) single = true;
      }
      if (!single) {
        if (!unk_id_)
          throw classify::ClassifyError("Unigram: the model has no unknown token (unk_id)");
        Node& target = best[start + mblen];
        const double cand = unk_score + here;
        if (target.starts_at < 0 || cand > target.score) {
          target.score = cand;
          target.starts_at = static_cast<std::int64_t>(start);
          target.id = *unk_id_;
        }
      }
      start += mblen;
    }
    // Walk back; runs of unknown pieces fuse.
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    std::size_t end = s.size();
    std::size_t fused_end = 0;
    bool fusing = false;
    while (end > 0) {
      const Node& n = best[end];
      const auto b = static_cast<std::size_t>(n.starts_at);
      if (unk_id_ && n.id == *unk_id_) {
        if (!fusing) fused_end = end;
        fusing = true;
      } else {
        if (fusing) spans.emplace_back(end, fused_end);
        fusing = false;
        spans.emplace_back(b, end);
      }
      end = b;
    }
    if (fusing) spans.emplace_back(0, fused_end);
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) emit(s, it->first, it->second, out);
  }

  std::optional<std::int32_t> token_to_id(std::string_view t) const override {
    auto it = ids_.find(t);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  std::string id_to_token(std::int32_t id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < pieces_.size()
               ? pieces_[static_cast<std::size_t>(id)].first
               : "";
  }

 private:
  void emit(std::string_view s, std::size_t b, std::size_t e, std::vector<Token>& out) const {
    const std::string_view piece = s.substr(b, e - b);
    const auto ub = static_cast<std::uint32_t>(b), ue = static_cast<std::uint32_t>(e);
    if (auto it = ids_.find(piece); it != ids_.end()) {
      out.push_back({it->second, std::string(piece), ub, ue});
      return;
    }
    if (byte_fallback_) {
      std::vector<Token> bytes;
      char code[8];
      for (unsigned char c : piece) {
        std::snprintf(code, sizeof code, "<0x%02X>", c);
        auto it = ids_.find(std::string_view(code));
        if (it == ids_.end()) break;
        bytes.push_back({it->second, code, ub, ue});
      }
      if (bytes.size() == piece.size()) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        return;
      }
    }
    if (!unk_id_) throw classify::ClassifyError("Unigram: the model has no unknown token (unk_id)");
    out.push_back({*unk_id_, std::string(piece), ub, ue});
  }

  std::vector<std::pair<std::string, double>> pieces_;
  Vocab ids_;
  std::optional<std::int32_t> unk_id_;
  bool byte_fallback_;
  double min_score_ = 0;
  std::size_t max_len_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_unigram(const boost::json::object& o) {
  std::vector<std::pair<std::string, double>> pieces;
  for (const auto& v : array_field(o, "vocab", "Unigram")) {
    if (!v.is_array() || v.get_array().size() != 2 || !v.get_array()[0].is_string() ||
        !v.get_array()[1].is_number())
      throw classify::ClassifyError("Unigram: vocab entry " + std::to_string(pieces.size()) +
                                    " is not a [piece, score] pair");
    pieces.emplace_back(std::string(v.get_array()[0].get_string()),
                        v.get_array()[1].to_number<double>());
  }
  std::optional<std::int32_t> unk;
  const std::int64_t u = int_field_or(o, "unk_id", -1);
  if (u >= 0) {
    if (static_cast<std::size_t>(u) >= pieces.size())
      throw classify::ClassifyError("Unigram: unk_id " + std::to_string(u) +
                                    " is out of the vocabulary");
    unk = static_cast<std::int32_t>(u);
  }
  return std::make_unique<Unigram>(std::move(pieces), unk,
                                   bool_field_or(o, "byte_fallback", false));
}

}  // namespace mcpclass::tokenizers::hf
