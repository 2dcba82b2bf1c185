// Internal: where libmcpclass_spm.so (the sentencepiece shim) is looked for. The shim is found
// relative to the file that holds this code, so an installed tree works wherever it was
// installed, and libmcpclass.so finds it whether a C program, Go (cgo) or Python (ctypes) loaded
// it.
#pragma once

#include <string>
#include <vector>

namespace mcpclass::classify::detail {

/// The shim's file name.
inline constexpr const char* kSentencePieceShimName = "libmcpclass_spm.so";

/// What the search starts from.
struct ShimSearch {
  /// $MCPCLASS_SPM_SHIM: when set, the only candidate.
  std::string override_path;
  /// The library or executable that holds the calling code (absolute).
  std::string module_path;
  /// The build tree this code was compiled in and the shim inside it: used only by modules that
  /// live in that tree (tests, the uninstalled CLI, the bindings' tests).
  std::string build_dir;
  std::string build_shim;
  /// The shim's folder relative to the installed executables (`../lib/mcpclass`), and its full
  /// path under the configured install prefix (for static consumers installed elsewhere).
  std::string bin_to_shim_dir;
  std::string installed_shim;
};

/// The paths to try, in order: the override alone; else, next to the module,
/// `<dir>/mcpclass/<shim>` (a library in the installed libdir), `<dir>/<bin_to_shim_dir>/<shim>`
/// (an installed executable), `<dir>/<shim>`; then the build tree's shim when the module is in
/// the build tree, else the configured install prefix's.
std::vector<std::string> shim_candidates(const ShimSearch& search);

/// The search of this process: the environment, the module holding this code (dladdr; the
/// executable via /proc/self/exe when the code is linked into it) and the compiled-in paths.
ShimSearch current_shim_search();

}  // namespace mcpclass::classify::detail
