// The keyword/regex rule classifier of mcpclass (src/classify/rule_classifier.cpp,
// keyword_matcher.cpp, routing_policy.cpp), re-implemented in JavaScript so the TypeScript-SDK
// peer does the same work per request. It reads the document `mcpclass config` prints, so both
// servers classify with the same categories, keywords, patterns, temperature and routing policy.
// bench/run.sh checks that both give the same answers on sample texts before timing anything.

const MAX_PREFIX = 48;

const isWordCode = (c) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 ||
  c === 43 || c === 35 || c >= 0x80;

// ASCII-lowercased words: runs of [A-Za-z0-9_+#] and any non-ASCII character.
function splitWords(text) {
  const words = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && !isWordCode(text.charCodeAt(i))) ++i;
    const start = i;
    while (i < n && isWordCode(text.charCodeAt(i))) ++i;
    if (i > start) words.push(text.slice(start, i).replace(/[A-Z]+/g, (m) => m.toLowerCase()));
  }
  return words;
}

class KeywordMatcher {
  constructor() {
    this.keywords = [];
    this.byFirstWord = new Map();
    this.byFirstPrefix = new Map();
  }

  add(keyword) {
    let prefix = false;
    const star = keyword.indexOf("*");
    if (star >= 0) {
      prefix = true;
      keyword = keyword.slice(0, star);
    }
    const words = splitWords(keyword);
    const id = this.keywords.length;
    const index = prefix && words.length === 1 ? this.byFirstPrefix : this.byFirstWord;
    if (!index.has(words[0])) index.set(words[0], []);
    index.get(words[0]).push(id);
    this.keywords.push({ words, prefix });
    return id;
  }

  matchesAt(k, words, at) {
    if (at + k.words.length > words.length) return false;
    for (let j = 0; j < k.words.length; ++j) {
      const word = words[at + j];
      const last = j + 1 === k.words.length;
      if (last && k.prefix ? !word.startsWith(k.words[j]) : word !== k.words[j]) return false;
    }
    return true;
  }

  match(text) {
    const words = splitWords(text);
    const found = new Uint8Array(this.keywords.length);
    for (let at = 0; at < words.length; ++at) {
      const word = words[at];
      const exact = this.byFirstWord.get(word);
      if (exact) for (const id of exact) if (!found[id] && this.matchesAt(this.keywords[id], words, at)) found[id] = 1;
      const longest = Math.min(word.length, MAX_PREFIX);
      for (let len = 1; len <= longest; ++len) {
        const ids = this.byFirstPrefix.get(word.slice(0, len));
        if (ids) for (const id of ids) found[id] = 1;
      }
    }
    const ids = [];
    for (let id = 0; id < found.length; ++id) if (found[id]) ids.push(id);
    return ids;
  }
}

const isSpace = (c) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\v" || c === "\f";

function countWords(text) {
  let words = 0;
  let inWord = false;
  for (const c of text) {
    const space = isSpace(c);
    if (!space && !inWord) ++words;
    inWord = !space;
  }
  return words;
}

function hasMarker(text, markers) {
  for (const word of text.split(/[^A-Za-z0-9]+/)) if (word && markers.includes(word.toLowerCase())) return true;
  return false;
}

/** The routing policy of mcpclass (src/classify/routing_policy.cpp, `routing.reasoning: rules`) and
 * its result contract, over any classifier's probabilities (config category order). */
export class Routed {
  /** @param config the JSON document of `mcpclass config` */
  constructor(config) {
    this.categories = config.categories;
    this.names = this.categories.map((c) => c.name);
    this.routing = config.routing;
    if (this.routing.reasoning !== "rules") throw new Error("only routing.reasoning: rules is mirrored");
    this.maxTextLength = config.server.max_text_length;
  }

  useReasoning(text, category, confidence) {
    if (category.use_reasoning !== undefined) return category.use_reasoning;
    const p = this.routing;
    const words = countWords(text);
    if (p.complex_query.enabled && words > p.complex_query.more_than_words && hasMarker(text, p.complex_query.markers))
      return p.complex_query.use_reasoning;
    for (const rule of p.short_queries)
      if (rule.category === category.name && words < rule.fewer_than_words) return rule.use_reasoning;
    if (p.high_confidence.enabled && confidence > p.high_confidence.above) return p.high_confidence.use_reasoning;
    if (p.low_confidence.enabled && confidence < p.low_confidence.below) return p.low_confidence.use_reasoning;
    return p.default_use_reasoning;
  }

  /** The wire result of classify_text: {class, confidence, model, use_reasoning[, probabilities, entropy]}. */
  result(text, probabilities, withProbabilities) {
    let best = 0;
    for (let i = 1; i < probabilities.length; ++i) if (probabilities[i] > probabilities[best]) best = i;
    const confidence = probabilities[best];
    const category = this.categories[best];
    const low = this.routing.low_confidence;
    const model = low.enabled && confidence < low.below && low.model ? low.model : category.model ?? this.routing.default_model;
    const out = { class: best, confidence, model, use_reasoning: this.useReasoning(text, category, confidence) };
    if (withProbabilities) {
      out.probabilities = probabilities;
      out.entropy = probabilities.reduce((h, p) => (p > 0 ? h - p * Math.log2(p) : h), 0);
    }
    return out;
  }

  /** The text problem mcpclass reports as an isError result, or null. */
  textProblem(text) {
    if (!/[^ \t\r\n\f\v]/.test(text)) return "text must not be empty";
    const length = [...text].length;
    if (length > this.maxTextLength) return `text is ${length} characters long; the limit is ${this.maxTextLength}`;
    return null;
  }
}

export class RuleClassifier extends Routed {
  /** @param config the JSON document of `mcpclass config` (classifier.kind "rules") */
  constructor(config) {
    if (config.classifier.kind !== "rules") throw new Error(`classifier.kind ${config.classifier.kind} is not "rules"`);
    super(config);
    const cls = config.classifier;
    this.temperature = cls.temperature;
    this.fallbackScore = cls.fallback_score;
    this.fallback = this.names.indexOf(cls.fallback ?? "general");
    this.matcher = new KeywordMatcher();
    this.keywordCategory = [];
    this.keywordWeight = [];
    this.patterns = [];
    for (const [name, rules] of Object.entries(cls.rules)) {
      const category = this.names.indexOf(name);
      for (const k of rules.keywords) {
        this.matcher.add(k);
        this.keywordCategory.push(category);
        this.keywordWeight.push(rules.keyword_weight);
      }
      for (const p of rules.patterns) this.patterns.push({ category, weight: rules.pattern_weight, re: new RegExp(p, "i") });
    }
  }

  probabilities(text) {
    const s = new Array(this.names.length).fill(0);
    for (const id of this.matcher.match(text)) s[this.keywordCategory[id]] += this.keywordWeight[id];
    for (const p of this.patterns) if (p.re.test(text)) s[p.category] += p.weight;
    if (s.every((x) => x === 0)) s[this.fallback] = this.fallbackScore;
    const top = Math.max(...s);
    let sum = 0;
    for (let i = 0; i < s.length; ++i) {
      s[i] = Math.exp((s[i] - top) / this.temperature);
      sum += s[i];
    }
    return s.map((x) => x / sum);
  }

  classify(text, withProbabilities) {
    return this.result(text, this.probabilities(text), withProbabilities);
  }
}
