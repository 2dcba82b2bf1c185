// The per-instruction-set kernels compiled against SIMDe (kernels/isa.hpp,
// MCPCLASS_KERNELS_EMULATED): the same functions as the library's, in namespace detail::emulated.
#pragma once

#include "kernels/activate.hpp"
#include "kernels/bf16gemm.hpp"
#include "kernels/dense_rows.hpp"
#include "kernels/packed_product.hpp"
#include "kernels/qgemm.hpp"
#include "kernels/softmax.hpp"

namespace mcpclass::kernels::detail::emulated {
Kernel kernel_avx2();
Kernel kernel_avx512();
QKernel qkernel_avx2();
QKernel qkernel_avx2_vnni();
QKernel qkernel_avx512_vnni();
QuantizeRow quantize_row_avx2();
SoftmaxRow softmax_row_avx2();
ActivationKernel activation_avx2();
ActivationKernel activation_avx512();
NormRow norm_row_avx2();
Bf16Kernel bf16kernel_avx512_bf16();
QGemm qgemm_amx();
Bf16Gemm bf16gemm_amx();
Bf16Row bf16_row_avx512();
}  // namespace mcpclass::kernels::detail::emulated
