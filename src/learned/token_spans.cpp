#include "learned/token_spans.hpp"

#include "learned/learned_errors.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::learned::detail {

namespace {

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !continuation(c); }));
}

// A token's place in the text, in code points (the pipeline's) and bytes.
struct Place {
  std::size_t start = 0, end = 0, byte_start = 0, byte_end = 0;
};

// The pipeline's pre_entity: a token that is not special, with its probabilities.
struct PreEntity {
  std::string word;
  std::vector<double> scores;
  Place place;
  std::size_t index = 0;
  bool is_subword = false;
};

// The pipeline's entity (aggregate) and entity group (group_sub_entities) alike.
struct Entity {
  std::string label;
  double score = 0.0;
  std::string word;
  Place place;
  std::optional<std::size_t> index;
};

std::size_t argmax(const std::vector<double>& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

class Aggregator {
 public:
  Aggregator(std::string_view text, const SpanRules& rules) : text_(text), rules_(rules) {
    // at_[b]: the code points before byte b.
    at_.resize(text.size() + 1);
    std::size_t count = 0;
    for (std::size_t b = 0; b < text.size(); ++b) {
      at_[b] = count;
      if (!continuation(text[b])) ++count;
    }
    at_[text.size()] = count;
  }

  std::vector<PreEntity> gather_pre_entities(const SpanWindow& w) const {
    const auto& t = *w.tokens;
    const std::size_t labels = rules_.labels.size();
    std::vector<PreEntity> out;
    for (std::size_t idx = 0; idx < t.ids.size(); ++idx) {
      if (idx < t.special_tokens_mask.size() && t.special_tokens_mask[idx] != 0) continue;
      PreEntity p;
      p.index = idx;
      p.word = idx < t.tokens.size() ? t.tokens[idx] : std::string();
      const auto [b0, b1] =
          idx < t.offsets.size() ? t.offsets[idx] : std::pair<std::uint32_t, std::uint32_t>{0, 0};
      if (b1 < b0 || b1 > text_.size())
        throw ClassifyError("a token's offsets [" + std::to_string(b0) + ", " + std::to_string(b1) +
                            ") fall outside the text");
      p.place = {at_[b0], at_[b1], b0, b1};
      const auto word_ref = text_.substr(b0, b1 - b0);
      if (rules_.word_aware) {
        p.is_subword = code_points(p.word) != code_points(word_ref);
      } else {
        // sentence[start - 1 : start + 1] holds no space (a space is one byte in UTF-8).
        p.is_subword = b0 > 0 && text_[b0 - 1] != ' ' && (b0 >= text_.size() || text_[b0] != ' ');
      }
      if (!rules_.unk_token.empty() && p.word == rules_.unk_token) {
        p.word = std::string(word_ref);
        p.is_subword = false;
      }
      // softmax with the maximum subtracted, as postprocess computes it.
      const auto row = w.logits.subspan(idx * labels, labels);
      const float mx = *std::max_element(row.begin(), row.end());
      double sum = 0.0;
      for (const float v : row) sum += p.scores.emplace_back(std::exp(static_cast<double>(v - mx)));
      for (auto& s : p.scores) s /= sum;
      out.push_back(std::move(p));
    }
    return out;
  }

  std::vector<Entity> aggregate(const std::vector<PreEntity>& pre, TokenAggregation a) const {
    std::vector<Entity> entities;
    if (a == TokenAggregation::none || a == TokenAggregation::simple) {
      for (const auto& p : pre) {
        const auto i = argmax(p.scores);
        entities.push_back({rules_.labels[i], p.scores[i], p.word, p.place, p.index});
      }
    } else {
      entities = aggregate_words(pre, a);
    }
    if (a == TokenAggregation::none) return entities;
    return group_entities(entities);
  }

 private:
  std::string decode(const auto& items) const {
    std::vector<std::string> words;
    for (const auto& e : items) words.push_back(e.word);
    return rules_.decoder.decode(words);
  }

  Entity aggregate_word(const std::vector<const PreEntity*>& group, TokenAggregation a) const {
    std::vector<std::string> words;
    for (const auto* e : group) words.push_back(e->word);
    Entity out;
    out.word = rules_.decoder.decode(words);
    out.place = {group.front()->place.start, group.back()->place.end,
                 group.front()->place.byte_start, group.back()->place.byte_end};
    if (a == TokenAggregation::first || a == TokenAggregation::max) {
      const PreEntity* chosen = group.front();
      if (a == TokenAggregation::max) {  // the first token whose best probability is highest
        double best = -1.0;
        for (const auto* e : group) {
          const double m = *std::max_element(e->scores.begin(), e->scores.end());
          if (m > best) best = m, chosen = e;
        }
      }
      const auto i = argmax(chosen->scores);
      out.label = rules_.labels[i];
      out.score = chosen->scores[i];
    } else {  // average: the mean probabilities over the word's tokens
      std::vector<double> mean(rules_.labels.size(), 0.0);
      for (const auto* e : group)
        for (std::size_t j = 0; j < mean.size(); ++j) mean[j] += e->scores[j];
      for (auto& m : mean) m /= static_cast<double>(group.size());
      const auto i = argmax(mean);
      out.label = rules_.labels[i];
      out.score = mean[i];
    }
    return out;
  }

  std::vector<Entity> aggregate_words(const std::vector<PreEntity>& pre, TokenAggregation a) const {
    std::vector<Entity> out;
    std::vector<const PreEntity*> group;
    for (const auto& p : pre) {
      if (!group.empty() && !p.is_subword) {
        out.push_back(aggregate_word(group, a));
        group.clear();
      }
      group.push_back(&p);
    }
    if (!group.empty()) out.push_back(aggregate_word(group, a));
    return out;
  }

  // get_tag: "B-X" → (B, X), "I-X" → (I, X), anything else → (I, itself).
  static std::pair<char, std::string_view> tag(std::string_view label) {
    if (label.starts_with("B-")) return {'B', label.substr(2)};
    if (label.starts_with("I-")) return {'I', label.substr(2)};
    return {'I', label};
  }

  Entity group_sub_entities(const std::vector<Entity>& group) const {
    Entity out;
    const std::string_view first = group.front().label;
    const auto dash = first.find('-');  // split("-", 1)[-1]
    out.label = std::string(dash == std::string_view::npos ? first : first.substr(dash + 1));
    for (const auto& e : group) out.score += e.score;
    out.score /= static_cast<double>(group.size());
    out.word = decode(group);
    out.place = {group.front().place.start, group.back().place.end, group.front().place.byte_start,
                 group.back().place.byte_end};
    return out;
  }

  std::vector<Entity> group_entities(const std::vector<Entity>& entities) const {
    std::vector<Entity> groups, group;
    for (const auto& e : entities) {
      if (!group.empty()) {
        const auto [bi, t] = tag(e.label);
        const auto [last_bi, last_tag] = tag(group.back().label);
        if (!(t == last_tag && bi != 'B')) {
          groups.push_back(group_sub_entities(group));
          group.clear();
        }
      }
      group.push_back(e);
    }
    if (!group.empty()) groups.push_back(group_sub_entities(group));
    return groups;
  }

  std::string_view text_;
  const SpanRules& rules_;
  std::vector<std::size_t> at_;
};

// aggregate_overlapping_entities: by start (stable), a span starting inside the one kept
// replaces it when longer, or as long and more probable.
std::vector<Entity> merge_overlapping(std::vector<Entity> entities) {
  if (entities.empty()) return entities;
  std::stable_sort(entities.begin(), entities.end(),
                   [](const Entity& a, const Entity& b) { return a.place.start < b.place.start; });
  std::vector<Entity> out;
  Entity previous = entities.front();
  for (auto& e : entities) {
    if (previous.place.start <= e.place.start && e.place.start < previous.place.end) {
      const auto length = e.place.end - e.place.start;
      const auto previous_length = previous.place.end - previous.place.start;
      if (length > previous_length || (length == previous_length && e.score > previous.score))
        previous = std::move(e);
    } else {
      out.push_back(std::move(previous));
      previous = std::move(e);
    }
  }
  out.push_back(std::move(previous));
  return out;
}

}  // namespace

std::vector<TokenSpan> aggregate_spans(std::string_view text, std::span<const SpanWindow> windows,
                                       TokenAggregation aggregation, const SpanRules& rules) {
  const Aggregator aggregator(text, rules);
  std::vector<Entity> all;
  for (const auto& w : windows) {
    for (auto& e : aggregator.aggregate(aggregator.gather_pre_entities(w), aggregation)) {
      if (std::find(rules.ignore_labels.begin(), rules.ignore_labels.end(), e.label) ==
          rules.ignore_labels.end())
        all.push_back(std::move(e));
    }
  }
  if (windows.size() > 1) all = merge_overlapping(std::move(all));
  std::vector<TokenSpan> out;
  out.reserve(all.size());
  for (auto& e : all)
    out.push_back({std::move(e.label), e.score, std::move(e.word), e.place.start, e.place.end,
                   e.place.byte_start, e.place.byte_end, e.index});
  return out;
}

}  // namespace mcpclass::learned::detail
