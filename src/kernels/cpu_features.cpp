#include "kernels/cpu_features.hpp"

#include <array>
#include <cstdlib>
#include <stdexcept>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace mcpclass::kernels {

namespace {

constexpr std::array<std::string_view, 7> kNames = {
    "portable", "avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16", "amx"};

#if defined(__x86_64__)
// XCR0: which register states the OS saves (bits 1–2 SSE/AVX, 5–7 AVX-512, 17–18 AMX tiles).
unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

// Linux hands out the AMX tile data state (XFEATURE_XTILEDATA, 18) only to a process that asks
// (since 5.16); a tile instruction without it ends the process with SIGILL.
bool amx_permitted() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid(1, a, b, c, d);
  const bool osxsave = (c >> 27) & 1, fma = (c >> 12) & 1;
  if (!osxsave) return f;
  const auto xcr = xcr0();
  const bool ymm = (xcr & 0x6) == 0x6, zmm = (xcr & 0xe6) == 0xe6;
  const bool tiles = (xcr & 0x60000) == 0x60000;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned leaf7_ebx = b, leaf7_ecx = c, leaf7_edx = d;
  __cpuid_count(7, 1, a, b, c, d);
  const unsigned leaf7_1_eax = a;
  f.avx2 = ymm && ((leaf7_ebx >> 5) & 1);
  f.fma = ymm && fma;
  f.avx_vnni = ymm && ((leaf7_1_eax >> 4) & 1);
  f.avx512f = zmm && ((leaf7_ebx >> 16) & 1);
  f.avx512bw = zmm && ((leaf7_ebx >> 30) & 1);
  f.avx512vl = zmm && ((leaf7_ebx >> 31) & 1);
  f.avx512_vnni = zmm && ((leaf7_ecx >> 11) & 1);
  f.avx512_bf16 = zmm && ((leaf7_1_eax >> 5) & 1);
  const bool amx = tiles && ((leaf7_edx >> 24) & 1) && amx_permitted();
  f.amx_bf16 = amx && ((leaf7_edx >> 22) & 1);
  f.amx_tile = amx;
  f.amx_int8 = amx && ((leaf7_edx >> 25) & 1);
#endif
  return f;
}

std::string describe(const CpuFeatures& f) {
  std::string out;
  auto add = [&](bool has, const char* name) {
    if (!has) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(f.avx2, "avx2");
  add(f.fma, "fma");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512_vnni, "avx512_vnni");
  add(f.avx_vnni, "avx_vnni");
  add(f.avx512_bf16, "avx512_bf16");
  add(f.amx_tile, "amx_tile");
  add(f.amx_bf16, "amx_bf16");
  add(f.amx_int8, "amx_int8");
  return out.empty() ? "none" : out;
}

std::string_view name(KernelSet set) {
  return kNames[static_cast<std::size_t>(set)];
}

KernelSet parse_kernel_set(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i]) return static_cast<KernelSet>(i);
  std::string names;
  for (auto n : kNames) names += (names.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown kernel set \"" + std::string(text) + "\" (known: " + names +
                              ")");
}

std::string missing_features(const CpuFeatures& f, KernelSet set) {
  std::string out;
  auto need = [&](bool has, const char* feature) {
    if (has) return;
    if (!out.empty()) out += ' ';
    out += feature;
  };
  if (set >= KernelSet::avx2) {
    need(f.avx2, "avx2");
    need(f.fma, "fma");
  }
  if (set == KernelSet::avx2_vnni) need(f.avx_vnni, "avx_vnni");
  if (set >= KernelSet::avx512) {
    need(f.avx512f, "avx512f");
    need(f.avx512bw, "avx512bw");
    need(f.avx512vl, "avx512vl");
  }
  if (set >= KernelSet::avx512_vnni) need(f.avx512_vnni, "avx512_vnni");
  if (set >= KernelSet::avx512_bf16) need(f.avx512_bf16, "avx512_bf16");
  if (set >= KernelSet::amx) {
    need(f.amx_tile, "amx_tile");
    need(f.amx_int8, "amx_int8");
    need(f.amx_bf16, "amx_bf16");
  }
  return out;
}

bool supports(const CpuFeatures& f, KernelSet set) {
  return missing_features(f, set).empty();
}

std::vector<KernelSet> runnable_kernel_sets(const CpuFeatures& f) {
  std::vector<KernelSet> sets;
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (supports(f, static_cast<KernelSet>(i))) sets.push_back(static_cast<KernelSet>(i));
  return sets;
}

KernelSet best_kernel_set(const CpuFeatures& f) {
  auto best = KernelSet::portable;
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (supports(f, static_cast<KernelSet>(i))) best = static_cast<KernelSet>(i);
  return best;
}

KernelSet choose_kernel_set(const CpuFeatures& f, std::string_view requested) {
  auto chosen = best_kernel_set(f);
  auto cap = [&](std::string_view text, const char* where) {
    if (text.empty()) return;
    const auto set = parse_kernel_set(text);
    if (!supports(f, set))
      throw std::invalid_argument(std::string(where) + " asks for kernel set " + std::string(text) +
                                  ", which needs " + missing_features(f, set) +
                                  " (this CPU has: " + describe(f) + ")");
    if (set < chosen) chosen = set;
  };
  cap(requested, "the model's `kernels` setting");
  if (const char* env = std::getenv("MCPCLASS_KERNELS")) cap(env, "MCPCLASS_KERNELS");
  return chosen;
}

}  // namespace mcpclass::kernels
