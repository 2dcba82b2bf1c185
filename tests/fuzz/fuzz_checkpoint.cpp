// libFuzzer target: the transformer checkpoint loader (issue 31, "Bad input"). The first byte
// picks what the rest is, written to a checkpoint directory as a published one holds it:
//   0  model.safetensors      → read_checkpoint_tensors, every tensor checked finite at its shape
//   1  config.json            → read_bert_config (a base model and both heads),
//                               read_modernbert_config (both heads), checkpoint_labels
//   2  adapter_config.json, a NUL, adapter_model.safetensors → merge_lora_adapter into a fixed
//      small base (an nn.Linear "m", a classifier and an embedding)
// Each must load or throw ClassifyError: never crash, hang, or allocate past what the input's own
// bytes justify (-rss_limit_mb). A loaded file must hold what it says: every tensor's values
// match its shape.
#include "architectures/bert/bert_config.hpp"
#include "architectures/modernbert/modernbert_config.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/lora_adapter.hpp"
#include "checkpoint/safetensors.hpp"
#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

using mcpclass::classify::ClassifyError;
using namespace mcpclass::checkpoint;
using namespace mcpclass::architectures;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_checkpoint: %s\n", what.c_str());
  std::abort();
}

// One directory per process, emptied for every input (libFuzzer runs inputs one at a time).
const fs::path& work_dir() {
  static const fs::path* dir = [] {
    auto* p = new fs::path(fs::temp_directory_path() /
                           ("mcpclass-fuzz-checkpoint-" + std::to_string(::getpid())));
    fs::create_directories(*p);
    return p;
  }();
  return *dir;
}

void write(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Every tensor holds its shape's count of values, and that count (computed without wrapping
// around) fits the bytes read: a 2-byte dtype at least.
void check_shapes(const SafeTensors& file, std::size_t bytes) {
  for (const auto& [name, t] : file.tensors) {
    if (t.values.size() != t.elements()) fail("tensor '" + name + "' holds the wrong count");
    std::uint64_t n = 1;
    bool wrapped = false, empty = false;
    for (const auto d : t.shape) {
      empty = empty || d == 0;
      wrapped = __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n) || wrapped;
    }
    if (!empty && (wrapped || n > bytes / 2))
      fail("tensor '" + name + "' claims more values than the file holds");
  }
}

// The base an adapter merges into: shapes of a tiny sequence classifier.
CheckpointTensors base() {
  CheckpointTensors b;
  b.description = "base";
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    SafeTensor t;
    t.shape = std::move(shape);
    t.values.assign(t.elements(), 0.5f);
    b.tensors.tensors[name] = std::move(t);
    b.file_of[name] = "base";
  };
  add("m.weight", {4, 3});
  add("m.bias", {4});
  add("classifier.weight", {2, 4});
  add("classifier.bias", {2});
  add("embeddings.word_embeddings.weight", {5, 4});
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto& dir = work_dir();
  try {
    switch (data[0] % 3) {
      case 0: {
        write(dir / "model.safetensors", rest);
        auto t = read_checkpoint_tensors(dir.string());
        check_shapes(t.tensors, rest.size());
        for (const auto& [name, tensor] : t.tensors.tensors) t.require(name, tensor.shape);
        break;
      }
      case 1: {
        write(dir / "config.json", rest);
        try {  // a base model (a sentence-transformers directory's): no labels needed
          if (read_bert_config(dir.string(), BertHead::none).max_tokens() == 0)
            fail("a base model config without tokens");
        } catch (const ClassifyError&) {
          // a config of a head, or a bad one
        }
        for (const auto head : {BertHead::sequence, BertHead::token}) {
          try {
            const auto c = read_bert_config(dir.string(), head);
            if (c.labels.empty() || c.max_tokens() == 0) fail("a config without labels or tokens");
          } catch (const ClassifyError&) {
            // a config the other head refuses; the loop tries both
          }
          try {
            const auto m = read_modernbert_config(dir.string(), head);
            if (m.labels.empty() || m.max_tokens() == 0 || m.global_layer.size() != m.layers ||
                m.hidden % m.heads != 0)
              fail("a ModernBERT config without labels, tokens or a layer type a layer");
          } catch (const ClassifyError&) {
            // as above
          }
        }
        checkpoint_labels(read_checkpoint_config(dir.string()), "config.json");
        break;
      }
      default: {
        const auto nul = rest.find('\0');
        write(dir / "adapter_config.json", rest.substr(0, nul));
        write(dir / "adapter_model.safetensors",
              nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1));
        auto b = base();
        merge_lora_adapter(dir.string(), b);
        check_shapes(b.tensors, std::max<std::size_t>(rest.size(), 1024));  // the base: 80 values
        break;
      }
    }
  } catch (const ClassifyError&) {
  }
  return 0;
}
