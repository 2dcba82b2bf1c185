// The activations computed, apart from architectures/common/activations.cpp (their names in a
// config), which the build without the learned component keeps and which must not need oneDNN.
//
// The GELUs run oneDNN's eltwise kernel (jit:avx2 here): std::erf per value took 11 ms for one
// BERT-base FFN activation of 128 tokens (128 × 3072 values, 1 thread), the kernel 0.5 ms, its
// error against erf in double 3.8e-7 (std::erf's 4.5e-7). A new value count costs one kernel
// build (~70 µs, then oneDNN's primitive cache); padded rows keep the counts few.
#include "kernels/activate.hpp"

#include "kernels/kernel_error.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <string>

namespace mcpclass::kernels {

void activate(HiddenActivation a, float* x, std::size_t count) {
  if (a == HiddenActivation::relu) {
    for (std::size_t i = 0; i < count; ++i) x[i] = std::max(x[i], 0.0f);
    return;
  }
  if (count == 0) return;
  const auto algorithm = a == HiddenActivation::gelu ? dnnl::algorithm::eltwise_gelu_erf
                                                     : dnnl::algorithm::eltwise_gelu_tanh;
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    const dnnl::memory::desc values({static_cast<dnnl::memory::dim>(count)},
                                    dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    const dnnl::eltwise_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, algorithm, values, 0.0f, 0.0f}, engine);
    dnnl::memory memory(values, engine, x);
    dnnl::eltwise_forward(pd).execute(stream, {{DNNL_ARG_SRC, memory}, {DNNL_ARG_DST, memory}});
    stream.wait();
  } catch (const dnnl::error& e) {
    throw KernelError(std::string("oneDNN failed computing an activation: ") + e.what());
  }
}

}  // namespace mcpclass::kernels
