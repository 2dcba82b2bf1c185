#include "kernels/blas_threads.hpp"

#include <dlfcn.h>

namespace mcpclass::kernels {

namespace {

// The symbol from the caller's scope (the libtorch plugin, which links OpenBLAS through
// libtorch), else from an already loaded libopenblas (the plugin's, dlopen'ed RTLD_LOCAL).
void* openblas_symbol(const char* name) {
  if (void* f = ::dlsym(RTLD_DEFAULT, name)) return f;
  void* lib = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  void* f = ::dlsym(lib, name);
  ::dlclose(lib);  // drops only the reference RTLD_NOLOAD added
  return f;
}

}  // namespace

bool set_blas_threads(int threads) {
  auto* set = reinterpret_cast<void (*)(int)>(openblas_symbol("openblas_set_num_threads"));
  if (set == nullptr) return false;
  set(threads);
  return true;
}

int blas_threads() {
  auto* get = reinterpret_cast<int (*)()>(openblas_symbol("openblas_get_num_threads"));
  return get == nullptr ? -1 : get();
}

}  // namespace mcpclass::kernels
