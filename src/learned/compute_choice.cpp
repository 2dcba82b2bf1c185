#include "learned/compute_choice.hpp"

#include "mcpclass/classify/errors.hpp"

#include <stdexcept>

namespace mcpclass::learned::detail {

kernels::Compute choose_compute(EncoderPrecision precision, const std::string& kernel_set,
                                const std::string& what) {
  const auto features = kernels::detect_cpu_features();
  kernels::Compute compute;
  try {
    compute.kernels = kernels::choose_kernel_set(features, kernel_set);
  } catch (const std::invalid_argument& e) {
    throw classify::ClassifyError(what + ": " + e.what());
  }
  switch (precision) {
    case EncoderPrecision::automatic:
    case EncoderPrecision::f32:
      compute.precision = kernels::Precision::f32;
      break;
    case EncoderPrecision::int8:
      compute.precision = kernels::Precision::int8;
      break;
    case EncoderPrecision::bf16:
      if (!features.avx512_bf16)
        throw classify::ClassifyError(
            what + ": precision bf16 needs avx512_bf16, which this CPU lacks (it has: " +
            kernels::describe(features) + "); use f32, int8 or auto");
      throw classify::ClassifyError(what +
                                    ": precision bf16 has no kernels in this build yet; use f32, "
                                    "int8 or auto");
  }
  return compute;
}

boost::json::object describe_compute(const kernels::Compute& compute) {
  return {{"precision", kernels::name(compute.precision)},
          {"kernels", std::string(kernels::name(compute.kernels))},
          {"cpu", kernels::describe(kernels::detect_cpu_features())}};
}

boost::json::array runnable_kernel_sets() {
  const auto features = kernels::detect_cpu_features();
  boost::json::array out;
  for (auto set = kernels::KernelSet::portable; set <= kernels::best_kernel_set(features);
       set = static_cast<kernels::KernelSet>(static_cast<int>(set) + 1))
    if (kernels::supports(features, set)) out.emplace_back(std::string(kernels::name(set)));
  return out;
}

}  // namespace mcpclass::learned::detail
