// Loading libmcpclass_torch.so (see torch_plugin.hpp). Not linked into the plugin itself, which
// defines torch_plugin() as its own table: keep anything else the plugin might use out of here.
#include "learned/learned_errors.hpp"
#include "learned/torch_plugin.hpp"

#include <dlfcn.h>

#include <mutex>

namespace mcpclass::learned::detail {

const TorchPlugin& load_torch_plugin(const tokenizers::ModuleSearch& search) {
  // RTLD_LOCAL keeps libtorch's ~290 libraries out of the global scope; RTLD_NODELETE because
  // objects made by the plugin (encoders, their vtables) may outlive any handle.
  void* handle = tokenizers::open_module(search, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  using Entry = const TorchPlugin* (*)();
  auto* entry = reinterpret_cast<Entry>(::dlsym(handle, "mcpclass_torch_plugin_v1"));
  if (entry == nullptr)
    throw ClassifyError(search.file_name + " (" + search.what +
                        ") lacks the entry point mcpclass_torch_plugin_v1");
  const TorchPlugin* table = entry();
  if (table == nullptr || table->version != kTorchPluginVersion)
    throw ClassifyError(search.file_name + " has plugin version " +
                        std::to_string(table == nullptr ? 0 : table->version) +
                        "; this library needs " + std::to_string(kTorchPluginVersion));
  return *table;
}

const TorchPlugin& torch_plugin() {
  // A failed load is not remembered: the caller gets the error, a later call (after fixing the
  // installation or MCPCLASS_TORCH_PLUGIN) tries again.
  static std::mutex mutex;
  static const TorchPlugin* loaded = nullptr;
  std::lock_guard lock(mutex);
  if (loaded == nullptr)
    loaded = &load_torch_plugin(
        tokenizers::current_module_search(tokenizers::RuntimeModule::torch_plugin));
  return *loaded;
}

}  // namespace mcpclass::learned::detail
