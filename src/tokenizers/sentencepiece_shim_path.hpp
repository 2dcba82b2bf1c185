// Internal: where the modules the library dlopens at run time are looked for: libmcpclass_spm.so
// (the sentencepiece shim) and libmcpclass_torch.so (everything that needs libtorch). A module is
// found relative to the file that holds the calling code, so an installed tree works wherever it
// was installed, and libmcpclass.so finds it whether a C program, Go (cgo) or Python (ctypes)
// loaded it.
#pragma once

#include <string>
#include <vector>

namespace mcpclass::tokenizers {

/// The modules, installed together in `<libdir>/mcpclass/`.
enum class RuntimeModule { sentencepiece_shim, torch_plugin };

/// The shim's file name.
inline constexpr const char* kSentencePieceShimName = "libmcpclass_spm.so";
/// The libtorch plugin's file name.
inline constexpr const char* kTorchPluginName = "libmcpclass_torch.so";

/// What the search for one module starts from.
struct ModuleSearch {
  /// The module's file name (kSentencePieceShimName, kTorchPluginName) and what it is, for
  /// messages.
  std::string file_name;
  std::string what;
  /// The environment variable that overrides the search, and its value: when set, the only
  /// candidate.
  std::string override_variable;
  std::string override_path;
  /// The library or executable that holds the calling code (absolute).
  std::string caller_path;
  /// The build tree this code was compiled in and the module inside it: used only by callers
  /// that live in that tree (tests, the uninstalled CLI, the bindings' tests).
  std::string build_dir;
  std::string build_module;
  /// The modules' folder relative to the installed executables (`../lib/mcpclass`), and the
  /// module's full path under the configured install prefix (for static consumers installed
  /// elsewhere).
  std::string bin_to_module_dir;
  std::string installed_module;
};

/// The paths to try, in order: the override alone; else, next to the caller,
/// `<dir>/mcpclass/<module>` (a library in the installed libdir), `<dir>/<bin_to_module_dir>/
/// <module>` (an installed executable), `<dir>/<module>` (a module next to another, or a static
/// consumer that bundles it); then the build tree's module when the caller is in the build tree,
/// else the configured install prefix's.
std::vector<std::string> module_candidates(const ModuleSearch& search);

/// The search of this process for `module`: the environment, the file holding this code (dladdr;
/// the executable via /proc/self/exe when the code is linked into it) and the compiled-in paths.
ModuleSearch current_module_search(RuntimeModule module);

/// dlopen(path, flags) of the first candidate of `search` that loads. Throws ClassifyError
/// naming the module, where an installed tree keeps it, the override variable and every path
/// tried with the loader's reason.
void* open_module(const ModuleSearch& search, int flags);

}  // namespace mcpclass::tokenizers
