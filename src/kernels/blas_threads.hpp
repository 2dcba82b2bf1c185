// Internal: the thread count of OpenBLAS, which runs libtorch's float32 matmuls on Debian. Its
// pool is separate from libtorch's (at::set_num_threads does not reach it) and defaults to one
// thread per core, which only adds spinning for single queries. Looked up at run time, because
// the BLAS behind libblas.so.3 may not be OpenBLAS.
#pragma once

namespace mcpclass::kernels {

/// openblas_set_num_threads(threads) when OpenBLAS is loaded in this process (process-wide
/// setting); false when it is not.
bool set_blas_threads(int threads);

/// openblas_get_num_threads(), or -1 when OpenBLAS is not loaded.
int blas_threads();

}  // namespace mcpclass::kernels
