#include "learned/torch_plugin/torch_files.hpp"

#include "learned/learned_errors.hpp"

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mcpclass::learned::detail {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClassifyError("cannot open '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void save_module(torch::jit::Module& module, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::path(path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    module.save(tmp);
  } catch (const c10::Error& e) {
    throw ClassifyError("cannot write '" + tmp + "': " + e.what_without_backtrace());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace mcpclass::learned::detail
