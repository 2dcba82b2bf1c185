// The sentence encoder and text model entry points: USE-lite safetensors weights and
// sentence-transformers directories run natively (use_lite_native_encoder.hpp,
// sentence_transformer_encoder.hpp), TorchScript models in the libtorch plugin (torch_plugin.hpp).
#include "architectures/sentence_transformers/sentence_transformer_config.hpp"
#include "learned/sentence_transformer_encoder.hpp"
#include "learned/torch_plugin.hpp"
#include "learned/torch_text_model.hpp"
#include "learned/use_lite_native_encoder.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"

namespace mcpclass::learned {

namespace detail {

std::shared_ptr<const SentenceEncoder> load_text_model(const EncoderOptions& options,
                                                       bool normalize, std::string_view what) {
  return torch_plugin().load_text_model(options, normalize, what);
}

}  // namespace detail

std::shared_ptr<const SentenceEncoder> load_sentence_encoder(const EncoderOptions& options) {
  if (architectures::is_sentence_transformer_dir(options.encoder_path))
    return detail::load_sentence_transformer(options);
  if (options.layers != 0 || options.dimensions != 0)
    throw classify::ClassifyError("'" + options.encoder_path +
                                  "' is not a sentence-transformers directory: layers and "
                                  "dimensions (2D Matryoshka) apply to those only");
  if (!options.prompt.empty())
    throw classify::ClassifyError("'" + options.encoder_path +
                                  "' is not a sentence-transformers directory: prompt names one "
                                  "of its config_sentence_transformers.json prompts");
  if (detail::is_native_encoder_file(options.encoder_path))
    return detail::load_native_use_lite(options);
  return detail::load_text_model(options, true, "sentence encoder");
}

}  // namespace mcpclass::learned
