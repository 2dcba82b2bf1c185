// Internal, plugin side: the functions of the TorchPlugin table (torch_plugin.hpp) that are not
// public API. Defined by the libtorch translation units of libmcpclass_torch.so.
#pragma once

#include "checkpoint/safetensors.hpp"
#include "learned/head_model.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::learned::detail {

/// TorchPlugin::load_text_model (torch_encoder.cpp).
std::shared_ptr<const SentenceEncoder> load_torchscript_text_model(const EncoderOptions& options,
                                                                   bool normalize,
                                                                   std::string_view what);

/// TorchPlugin::read_torchscript_head and write_torchscript_head (torch_head.cpp).
std::map<std::string, checkpoint::SafeTensor> read_torchscript_head(const std::string& path);
void write_torchscript_head(const HeadModel& head, const std::string& path);

}  // namespace mcpclass::learned::detail
