// Internal: the TorchScript text model (tokenizer + TorchScript forward(ids, mask)), shared by
// the sentence encoder (rows L2-normalised) and the sequence classifier (raw logits). It runs in
// the libtorch plugin (torch_plugin.hpp); this is the library's entry point.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"

#include <memory>
#include <string_view>

namespace mcpclass::learned::detail {

/// `normalize`: L2-normalise each output row. `what` names the model in error messages.
std::shared_ptr<const SentenceEncoder> load_text_model(const EncoderOptions& options,
                                                       bool normalize, std::string_view what);

}  // namespace mcpclass::learned::detail
