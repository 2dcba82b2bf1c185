#include "architectures/common/dense_weights.hpp"

#include "mcpclass/classify/errors.hpp"

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
  return take_concatenated_dense(file, compute, names, std::vector<std::size_t>(names.size(), out),
                                 in, true);
}

kernels::Dense take_concatenated_dense(checkpoint::CheckpointTensors& file,
                                       const kernels::Compute& compute,
                                       const std::vector<std::string>& names,
                                       const std::vector<std::size_t>& outs, std::size_t in,
                                       bool bias) {
  std::vector<float> weight, biases;
  std::size_t stacked = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto w = file.take(names[i] + ".weight",
                             {checkpoint::shape_dim(outs[i]), checkpoint::shape_dim(in)});
    weight.insert(weight.end(), w.begin(), w.end());
    if (bias) {
      const auto b = file.take(names[i] + ".bias", {checkpoint::shape_dim(outs[i])});
      biases.insert(biases.end(), b.begin(), b.end());
    }
    stacked += outs[i];
  }
  return kernels::make_dense(weight, std::move(biases), in, stacked, compute);
}

kernels::Norm take_norm(checkpoint::CheckpointTensors& file, const std::string& name,
                        std::size_t width, bool bias) {
  kernels::Norm n{file.take(name + ".weight", {checkpoint::shape_dim(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {checkpoint::shape_dim(width)});
  return n;
}

void require_every_tensor_taken(const checkpoint::CheckpointTensors& file,
                                const std::string& architecture, const std::string& config_file,
                                const std::string& keys) {
  // take() moves a tensor's values out, leaving the (libstdc++: always) empty vector.
  for (const auto& [name, tensor] : file.tensors.tensors)
    if (!tensor.values.empty())
      throw classify::ClassifyError("'" + file.file_of.at(name) + "' tensor '" + name +
                                    "' is not part of a " + architecture + " with '" + config_file +
                                    "' (check " + keys + ")");
}

}  // namespace mcpclass::architectures
