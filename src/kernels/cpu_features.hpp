// Internal: what this CPU can run, and the kernel set a model is given at load (one per model, as
// ONNX Runtime's MLAS picks its kernels once per process from CPUID). A set can be forced lower
// (a model's `kernels` setting, the MCPCLASS_KERNELS environment variable) so that the tests run
// every path on any machine; never higher than the CPU has.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::kernels {

/// The instruction-set extensions the engine's kernels use, as CPUID and XGETBV report them
/// (a feature counts only when the OS saves its registers; the AMX ones only once Linux has
/// granted this process the tile data state, which detect_cpu_features() asks for).
struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false;
  bool avx512_vnni = false, avx_vnni = false, avx512_bf16 = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;
};

/// This CPU's features. Where CPUID reports AMX, asks Linux for the process's permission to use
/// the tile data (arch_prctl ARCH_REQ_XCOMP_PERM: once granted it stays, so asking again is
/// harmless); refused, AMX counts as absent. Thread-safety: safe (reads CPUID each call).
CpuFeatures detect_cpu_features();

/// The features as "avx2 fma avx512f ..." (those present), for logs and /health.
std::string describe(const CpuFeatures& f);

/// The kernel sets, lowest first; a CPU runs a set when it has the set's features (listed with
/// each: `+` adds to avx2's). A model gets the highest set its CPU runs (or a lower one, forced).
enum class KernelSet {
  portable,     ///< plain C++: every machine
  avx2,         ///< avx2 fma: fp32 6×16 FMA tiles; int8 by vpmaddubsw + vpmaddwd (sign trick)
  avx2_vnni,    ///< + avx_vnni: int8 by vpdpbusd on 256 bits
  avx512,       ///< + avx512f avx512bw avx512vl: fp32 8×16 tiles on 512 bits; int8 as avx2
  avx512_vnni,  ///< avx512's + avx512_vnni: int8 by vpdpbusd on 512 bits
  avx512_bf16,  ///< avx512_vnni's + avx512_bf16: bf16 by vdpbf16ps on 512 bits
  amx,          ///< avx512_bf16's + amx_tile amx_int8 amx_bf16: int8 and bf16 by AMX tiles
};

/// "portable", "avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16", "amx".
std::string_view name(KernelSet set);

/// The set named `text`; throws std::invalid_argument naming the accepted names.
KernelSet parse_kernel_set(std::string_view text);

/// Whether `f` has every feature `set` needs.
bool supports(const CpuFeatures& f, KernelSet set);

/// The features `set` needs that `f` lacks, as "avx2 fma" (empty when it runs).
std::string missing_features(const CpuFeatures& f, KernelSet set);

/// The sets `f` runs, lowest first (portable always).
std::vector<KernelSet> runnable_kernel_sets(const CpuFeatures& f);

/// The highest set `f` runs.
KernelSet best_kernel_set(const CpuFeatures& f);

/// The set a model gets: the highest `f` runs, capped by `requested` (a name, or empty for no
/// cap) and by the environment variable MCPCLASS_KERNELS (same names) when set; throws
/// std::invalid_argument for an unknown name, or one this CPU cannot run (naming the missing
/// features). Thread-safety: reads the environment.
KernelSet choose_kernel_set(const CpuFeatures& f, std::string_view requested);

}  // namespace mcpclass::kernels
