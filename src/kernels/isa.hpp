// Internal: what the per-instruction-set kernel files include in place of <immintrin.h>.
// Normally the compiler's intrinsics, and MCPCLASS_ISA("avx2,fma") marks a function compiled for
// that set alone (the file itself builds for the baseline, so a CPU without the set never runs
// it). With MCPCLASS_KERNELS_EMULATED (the `kernels_emulated` test, tests/kernels_emulated) the
// same files compile a second time against SIMDe's portable versions of the intrinsics, as plain
// C++ in namespace `detail::emulated`: the AVX-512 and VNNI tiles then run, slowly, on a CPU that
// lacks those sets, and are checked there against the portable tiles' bits.
#pragma once

#if defined(MCPCLASS_KERNELS_EMULATED)
#include "kernels/isa_emulated.hpp"
#define MCPCLASS_ISA(features)
#define MCPCLASS_ISA_BEGIN namespace emulated {
#define MCPCLASS_ISA_END }
#else
// GCC 12's intrinsics start from _mm512_undefined_*() (`__m512i __Y = __Y;`), which its
// -Wmaybe-uninitialized reports once a caller is inlined (GCC PR 105593, fixed in 13 by this same
// pragma inside the headers); the warning's location is the header, so the pragma goes around it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define MCPCLASS_ISA(features) __attribute__((target(features)))
#define MCPCLASS_ISA_BEGIN
#define MCPCLASS_ISA_END
#endif
