#include "architectures/common/dense_weights.hpp"

namespace mcpclass::architectures {

kernels::Dense take_dense(checkpoint::CheckpointTensors& file, const kernels::Compute& compute,
                          const std::string& name, std::size_t in, std::size_t out, bool bias) {
  const auto weight =
      file.take(name + ".weight", {checkpoint::shape_dim(out), checkpoint::shape_dim(in)});
  std::vector<float> b;
  if (bias) b = file.take(name + ".bias", {checkpoint::shape_dim(out)});
  return kernels::make_dense(weight, std::move(b), in, out, compute);
}

kernels::Dense take_stacked_dense(checkpoint::CheckpointTensors& file,
                                  const kernels::Compute& compute,
                                  const std::vector<std::string>& names, std::size_t in,
                                  std::size_t out) {
  std::vector<float> weight, bias;
  for (const auto& name : names) {
    const auto w =
        file.take(name + ".weight", {checkpoint::shape_dim(out), checkpoint::shape_dim(in)});
    weight.insert(weight.end(), w.begin(), w.end());
    const auto b = file.take(name + ".bias", {checkpoint::shape_dim(out)});
    bias.insert(bias.end(), b.begin(), b.end());
  }
  const std::size_t stacked = names.size() * out;
  return kernels::make_dense(weight, std::move(bias), in, stacked, compute);
}

kernels::Norm take_norm(checkpoint::CheckpointTensors& file, const std::string& name,
                        std::size_t width, bool bias) {
  kernels::Norm n{file.take(name + ".weight", {checkpoint::shape_dim(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {checkpoint::shape_dim(width)});
  return n;
}

}  // namespace mcpclass::architectures
