// The sentence encoder and text model entry points: TorchScript models run in the libtorch
// plugin (torch_plugin.hpp).
#include "mcpclass/classify/embedding_encoder.hpp"
#include "torch/torch_plugin.hpp"
#include "torch/torch_text_model.hpp"

namespace mcpclass::classify {

namespace detail {

std::shared_ptr<const SentenceEncoder> load_text_model(const EncoderOptions& options,
                                                       bool normalize, std::string_view what) {
  return torch_plugin().load_text_model(options, normalize, what);
}

}  // namespace detail

std::shared_ptr<const SentenceEncoder> load_sentence_encoder(const EncoderOptions& options) {
  return detail::load_text_model(options, true, "sentence encoder");
}

}  // namespace mcpclass::classify
