// libmcpclass_torch.so's entry point: the table of torch_plugin.hpp over this module's functions.
// Also this module's torch_plugin(), so the copy of the library linked in here calls straight into
// the module instead of dlopen'ing it again.
#include "learned/torch_plugin.hpp"
#include "learned/torch_plugin/plugin_impl.hpp"

namespace mcpclass::learned::detail {

namespace {

const TorchPlugin kTable{.version = kTorchPluginVersion,
                         .load_text_model = &load_torchscript_text_model,
                         .train_head = &train_head,
                         .export_sequence_classifier = &export_sequence_classifier,
                         .convert_use_lite = &convert_use_lite,
                         .read_torchscript_head = &read_torchscript_head,
                         .write_torchscript_head = &write_torchscript_head};

}  // namespace

const TorchPlugin& torch_plugin() {
  return kTable;
}

}  // namespace mcpclass::learned::detail

extern "C" __attribute__((visibility("default"))) const mcpclass::learned::detail::TorchPlugin*
mcpclass_torch_plugin_v1() {
  return &mcpclass::learned::detail::kTable;
}
