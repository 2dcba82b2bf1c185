// Locating libmcpclass_spm.so at run time (see sentencepiece_shim_path.hpp).
#include "torch/sentencepiece_shim_path.hpp"

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
#ifndef MCPCLASS_SPM_BIN_TO_DIR
#define MCPCLASS_SPM_BIN_TO_DIR "../lib/mcpclass"
#endif
#ifndef MCPCLASS_SPM_INSTALL_PATH
#define MCPCLASS_SPM_INSTALL_PATH ""
#endif

namespace mcpclass::classify::detail {

namespace fs = std::filesystem;

namespace {

// Symlinks resolved where possible: a library reached through a link finds the shim installed
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

std::vector<std::string> shim_candidates(const ShimSearch& search) {
  if (!search.override_path.empty()) return {search.override_path};
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    const auto s = p.lexically_normal().string();
    for (const auto& have : out)
      if (have == s) return;
    out.push_back(s);
  };
  if (!search.module_path.empty()) {
    const auto dir = resolved(search.module_path).parent_path();
    add(dir / "mcpclass" / kSentencePieceShimName);
    if (!search.bin_to_shim_dir.empty()) add(dir / search.bin_to_shim_dir / kSentencePieceShimName);
    add(dir / kSentencePieceShimName);
  }
  const bool in_build_tree =
      !search.module_path.empty() && is_inside(search.module_path, search.build_dir);
  if (in_build_tree && !search.build_shim.empty()) add(search.build_shim);
  if (!in_build_tree && !search.installed_shim.empty()) add(search.installed_shim);
  return out;
}

ShimSearch current_shim_search() {
  ShimSearch s;
  if (const char* env = std::getenv("MCPCLASS_SPM_SHIM"); env != nullptr) s.override_path = env;
  s.module_path = this_module_path();
  s.build_dir = MCPCLASS_BUILD_TREE;
  s.build_shim = MCPCLASS_SPM_BUILD_PATH;
  s.bin_to_shim_dir = MCPCLASS_SPM_BIN_TO_DIR;
  s.installed_shim = MCPCLASS_SPM_INSTALL_PATH;
  return s;
}

}  // namespace mcpclass::classify::detail
