// Locating the run-time modules (see sentencepiece_shim_path.hpp).
#include "tokenizers/sentencepiece_shim_path.hpp"

#include "mcpclass/classify/errors.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

// Set by src/CMakeLists.txt on this file only, so the rest of the library compiles identically
// in every build tree (ccache hits across worktrees).
#ifndef MCPCLASS_BUILD_TREE
#define MCPCLASS_BUILD_TREE ""
#endif
#ifndef MCPCLASS_SPM_BUILD_PATH
#define MCPCLASS_SPM_BUILD_PATH ""
#endif
#ifndef MCPCLASS_TORCH_BUILD_PATH
#define MCPCLASS_TORCH_BUILD_PATH ""
#endif
#ifndef MCPCLASS_MODULE_BIN_TO_DIR
#define MCPCLASS_MODULE_BIN_TO_DIR "../lib/mcpclass"
#endif
#ifndef MCPCLASS_MODULE_INSTALL_DIR
#define MCPCLASS_MODULE_INSTALL_DIR ""
#endif

namespace mcpclass::tokenizers {

namespace fs = std::filesystem;

namespace {

// Symlinks resolved where possible: a library reached through a link finds a module installed
// next to the real file.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  auto out = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : out;
}

bool is_inside(const fs::path& file, const fs::path& dir) {
  if (dir.empty()) return false;
  const auto rel = resolved(file).lexically_relative(resolved(dir));
  return !rel.empty() && *rel.begin() != "..";
}

// The file that holds this function: libmcpclass.so, or the executable it is linked into.
std::string this_module_path() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(&this_module_path), &info,
              reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0)
    return {};
  std::error_code ec;
  // The main program's link map has an empty name and dladdr reports argv[0] for it, which need
  // not be a path at all.
  if (map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0') {
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.string();
  }
  auto path = fs::absolute(map->l_name, ec);
  return ec ? std::string(map->l_name) : path.string();
}

}  // namespace

std::vector<std::string> module_candidates(const ModuleSearch& search) {
  if (!search.override_path.empty()) return {search.override_path};
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    const auto s = p.lexically_normal().string();
    for (const auto& have : out)
      if (have == s) return;
    out.push_back(s);
  };
  if (!search.caller_path.empty()) {
    const auto dir = resolved(search.caller_path).parent_path();
    add(dir / "mcpclass" / search.file_name);
    if (!search.bin_to_module_dir.empty()) add(dir / search.bin_to_module_dir / search.file_name);
    add(dir / search.file_name);
  }
  const bool in_build_tree =
      !search.caller_path.empty() && is_inside(search.caller_path, search.build_dir);
  if (in_build_tree && !search.build_module.empty()) add(search.build_module);
  if (!in_build_tree && !search.installed_module.empty()) add(search.installed_module);
  return out;
}

ModuleSearch current_module_search(RuntimeModule module) {
  const bool shim = module == RuntimeModule::sentencepiece_shim;
  ModuleSearch s;
  s.file_name = shim ? kSentencePieceShimName : kTorchPluginName;
  s.what = shim ? "the sentencepiece shim" : "the libtorch plugin";
  s.override_variable = shim ? "MCPCLASS_SPM_SHIM" : "MCPCLASS_TORCH_PLUGIN";
  if (const char* env = std::getenv(s.override_variable.c_str()); env != nullptr)
    s.override_path = env;
  s.caller_path = this_module_path();
  s.build_dir = MCPCLASS_BUILD_TREE;
  s.build_module = shim ? MCPCLASS_SPM_BUILD_PATH : MCPCLASS_TORCH_BUILD_PATH;
  s.bin_to_module_dir = MCPCLASS_MODULE_BIN_TO_DIR;
  if (const std::string dir = MCPCLASS_MODULE_INSTALL_DIR; !dir.empty())
    s.installed_module = dir + "/" + s.file_name;
  return s;
}

void* open_module(const ModuleSearch& search, int flags) {
  std::string tried;
  for (const auto& path : module_candidates(search)) {
    tried += tried.empty() ? "; tried " : ", ";
    if (!fs::exists(path)) {
      tried += path + " (missing)";
      continue;
    }
    if (void* handle = ::dlopen(path.c_str(), flags)) return handle;
    const char* err = ::dlerror();
    tried += err != nullptr ? std::string(err) : path;
  }
  throw classify::ClassifyError("cannot load " + search.what + " " + search.file_name +
                                " (an installed tree keeps it in <libdir>/mcpclass/; set " +
                                search.override_variable + " to its path)" + tried);
}

}  // namespace mcpclass::tokenizers
