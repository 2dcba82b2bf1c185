// Labelled examples for the learned classifiers and the train/eval commands, and the
// deterministic held-out split. Plain values and pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::learned {

struct LabelledExample {
  std::string text;
  std::string category;
  std::string id;  ///< From the file when present (JSONL `id`), else the text.
  /// Where the row comes from (JSONL `source`), else the file's name without its extensions;
  /// `mcpclass eval` reports accuracy per source.
  std::string source;
  /// The source's own split (JSONL `split`: "train" or "test"); empty = the hashed split.
  std::string split;
  /// The source's own label (JSONL `label`, e.g. a StackExchange site or a CLINC150 intent;
  /// "oos" marks CLINC150's out-of-scope requests), for reports; empty when absent.
  std::string label;

  /// Labelled out of scope ("oos" or "oos/<anything>", CLINC150's spelling): no category's
  /// text, kept from the out-of-scope score's prototypes and counted apart by `mcpclass eval`.
  bool out_of_scope() const;
};

/// Reads CSV (a header naming `text` and `category` columns; RFC 4180 quoting) or JSONL
/// (`{"text":..,"category":..[,"id":..][,"source":..][,"split":"train"|"test"]}` per line),
/// chosen by the `.jsonl`/`.json` extension.
/// Throws ClassifyError naming the file and line on malformed input or an empty file.
std::vector<LabelledExample> read_labelled_examples(const std::string& path);

/// Which part of a deterministic split a row belongs to.
enum class SplitPart { all, train, test };

/// A row's own `split` when it has one (a source's published split stays held out); otherwise
/// deterministic by a hash of `id`: in `test` when FNV-1a(id) mod 100 < test_percent. Stable
/// across runs, machines and file order; stratified in expectation.
bool in_split(const LabelledExample& example, SplitPart part, unsigned test_percent = 20);
std::vector<LabelledExample> select_split(const std::vector<LabelledExample>& examples,
                                          SplitPart part, unsigned test_percent = 20);

}  // namespace mcpclass::learned
