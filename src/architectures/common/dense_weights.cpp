#include "architectures/common/dense_weights.hpp"

#include "kernels/packed_product.hpp"

namespace mcpclass::architectures {

kernels::Dense take_dense(checkpoint::CheckpointTensors& file, const std::string& name,
                          std::size_t in, std::size_t out, bool bias) {
  kernels::Dense d{in,
                   out,
                   kernels::pack_weights(file.take(name + ".weight", {checkpoint::shape_dim(out),
                                                                      checkpoint::shape_dim(in)}),
                                         in, out),
                   {}};
  if (bias) d.bias = file.take(name + ".bias", {checkpoint::shape_dim(out)});
  return d;
}

kernels::Dense take_stacked_dense(checkpoint::CheckpointTensors& file,
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
  return {in, stacked, kernels::pack_weights(weight, in, stacked), std::move(bias)};
}

kernels::Norm take_norm(checkpoint::CheckpointTensors& file, const std::string& name,
                        std::size_t width, bool bias) {
  kernels::Norm n{file.take(name + ".weight", {checkpoint::shape_dim(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {checkpoint::shape_dim(width)});
  return n;
}

}  // namespace mcpclass::architectures
