#include "learned/dense_rows.hpp"

#include "learned/checkpoint_files.hpp"
#include "mcpclass/classify/errors.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

namespace mcpclass::learned {
using classify::ClassifyError;
}  // namespace mcpclass::learned

namespace mcpclass::learned::detail {

Dense take_dense(CheckpointTensors& file, const std::string& name, std::size_t in,
                 std::size_t out) {
  const auto s = [](std::size_t v) { return static_cast<std::int64_t>(v); };
  Dense d{in, out, file.take(name + ".weight", {s(out), s(in)}),
          file.take(name + ".bias", {s(out)})};
  return d;
}

void linear(const Dense& dn, const float* x, std::size_t rows, float* y) {
  using dim = dnnl::memory::dim;
  const auto d = [](std::size_t v) { return static_cast<dim>(v); };
  for (std::size_t r = 0; r < rows; ++r) std::copy(dn.bias.begin(), dn.bias.end(), y + r * dn.out);
  for (std::size_t r = 0; r < rows; r += kRowBlock) {
    const auto status =
        dnnl::sgemm('N', 'T', d(kRowBlock), d(dn.out), d(dn.in), 1.0f, x + r * dn.in, d(dn.in),
                    dn.weight.data(), d(dn.in), 1.0f, y + r * dn.out, d(dn.out));
    if (status != dnnl::status::success) throw ClassifyError("oneDNN sgemm failed in the encoder");
  }
}

}  // namespace mcpclass::learned::detail
