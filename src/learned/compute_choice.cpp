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
      // The portable bf16 tile computes the same bits but runs several times slower than f32:
      // bf16 is offered only where vdpbf16ps runs it.
      if (!features.avx512_bf16)
        throw classify::ClassifyError(
            what + ": precision bf16 needs avx512_bf16, which this CPU lacks (it has: " +
            kernels::describe(features) + "); use f32, int8 or auto");
      if (compute.kernels < kernels::KernelSet::avx512_bf16)
        throw classify::ClassifyError(what + ": precision bf16 needs kernel set avx512_bf16, and " +
                                      "this model's is capped at " +
                                      std::string(kernels::name(compute.kernels)) +
                                      " (its `kernels` setting or MCPCLASS_KERNELS)");
      compute.precision = kernels::Precision::bf16;
      break;
  }
  return compute;
}

boost::json::object describe_compute(const kernels::Compute& compute) {
  return {{"precision", kernels::name(compute.precision)},
          {"kernels", std::string(kernels::name(compute.kernels))},
          {"cpu", kernels::describe(kernels::detect_cpu_features())}};
}

boost::json::array runnable_kernel_sets() {
  boost::json::array out;
  for (auto set : kernels::runnable_kernel_sets(kernels::detect_cpu_features()))
    out.emplace_back(std::string(kernels::name(set)));
  return out;
}

}  // namespace mcpclass::learned::detail
