#include "checkpoint/safetensors.hpp"

#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>

namespace mcpclass::checkpoint {

namespace json = boost::json;

namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

// Bounds a header so a corrupt length cannot ask for gigabytes (the format's own limit).
constexpr std::uint64_t kMaxHeader = 100'000'000;

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw classify::ClassifyError("'" + path + "' is not a valid safetensors file: " + why);
}

std::uint64_t read_u64(const char* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::size_t dtype_size(std::string_view dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "BF16" || dtype == "F16") return 2;
  return 0;
}

// IEEE half → float, subnormals, infinities and NaN included.
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: value = mantissa · 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign != 0 ? -magnitude : magnitude;
}

// A shape whose byte count (elements × `width`) wraps around 64 bits could match a short byte
// range and claim sizes the data does not have; data_offsets catch every other lie.
std::vector<std::int64_t> read_shape(const json::value& v, const std::string& path,
                                     const std::string& name, std::uint64_t width) {
  std::vector<std::int64_t> shape;
  const auto* a = v.if_array();
  if (a == nullptr) bad(path, "tensor '" + name + "' has no shape array");
  std::uint64_t bytes = width;
  bool wrapped = false, empty = false;
  for (const auto& d : *a) {
    if (!d.is_int64() || d.as_int64() < 0) bad(path, "tensor '" + name + "' has a malformed shape");
    shape.push_back(d.as_int64());
    empty = empty || d.as_int64() == 0;
    wrapped =
        __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d.as_int64()), &bytes) || wrapped;
  }
  if (wrapped && !empty) bad(path, "tensor '" + name + "' has a shape larger than the file's data");
  return shape;
}

std::size_t elements_of(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

// A tensor as the header describes it, before its bytes are read.
struct StoredTensor {
  std::string name, dtype;
  std::size_t width;
  std::vector<std::int64_t> shape;
  std::uint64_t begin, end;  // within the data after the header
};

std::string range_of(const StoredTensor& t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
}

// The format's own rule: the tensors' byte ranges tile the data, without overlaps or holes. So
// the values read add up to the file's data at most (twice that for 16-bit tensors, which are
// widened to float), where 300 entries naming the same 1 MiB once asked for 300 MiB.
void require_tiling(const std::string& path, std::vector<StoredTensor>& stored,
                    std::uint64_t data_size) {
  std::stable_sort(stored.begin(), stored.end(), [](const StoredTensor& a, const StoredTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const StoredTensor* previous = nullptr;
  for (const auto& t : stored) {
    if (t.begin < covered)
      bad(path, "tensor '" + t.name + "' " + range_of(t) + " overlaps tensor '" + previous->name +
                    "' " + range_of(*previous) + " (each byte of the data belongs to one tensor)");
    if (t.begin > covered)
      bad(path, "the data has a gap: bytes [" + std::to_string(covered) + ", " +
                    std::to_string(t.begin) + ") belong to no tensor (the tensors' data_offsets " +
                    "must cover the data without gaps)");
    covered = t.end;
    if (t.end > t.begin) previous = &t;
  }
  if (covered != data_size)
    bad(path, "the data has " + std::to_string(data_size - covered) +
                  " bytes after the last tensor's (the tensors' data_offsets must cover the " +
                  "data without gaps)");
}

// `values` has the tensor's element count; the bytes go straight into it when they are F32.
void read_values(std::ifstream& in, const std::string& path, std::uint64_t data_start,
                 const StoredTensor& s, std::vector<float>& values) {
  // A tensor with a zero dimension: no values, and memcpy may not be given the null pointer an
  // empty vector has (UBSan: tests/unit/test_safetensors.cpp).
  if (s.end == s.begin) return;
  in.seekg(static_cast<std::streamoff>(data_start + s.begin));
  if (s.width == 4) {
    if (!in.read(reinterpret_cast<char*>(values.data()),
                 static_cast<std::streamsize>(s.end - s.begin)))
      bad(path, "tensor '" + s.name + "' is truncated");
    return;
  }
  std::string raw(static_cast<std::size_t>(s.end - s.begin), '\0');
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size())))
    bad(path, "tensor '" + s.name + "' is truncated");
  if (s.dtype == "F16") {
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::uint16_t bits = 0;
      std::memcpy(&bits, raw.data() + 2 * i, 2);
      values[i] = half_to_float(bits);
    }
  } else {
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::uint32_t bits = 0;
      std::memcpy(reinterpret_cast<char*>(&bits) + 2, raw.data() + 2 * i, 2);
      values[i] = std::bit_cast<float>(bits);
    }
  }
}

}  // namespace

std::size_t SafeTensor::elements() const {
  return elements_of(shape);
}

const SafeTensor& SafeTensors::require(const std::string& name,
                                       const std::vector<std::int64_t>& shape,
                                       const std::string& file) const {
  const auto it = tensors.find(name);
  if (it == tensors.end())
    throw classify::ClassifyError("'" + file + "' has no tensor '" + name + "'");
  if (it->second.shape != shape) {
    std::string want, got;
    for (const auto d : shape) want += (want.empty() ? "" : "×") + std::to_string(d);
    for (const auto d : it->second.shape) got += (got.empty() ? "" : "×") + std::to_string(d);
    throw classify::ClassifyError("'" + file + "' tensor '" + name + "' is " + got + ", expected " +
                                  want);
  }
  return it->second;
}

bool looks_like_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[9];
  if (!in.read(head, sizeof head)) return false;
  const auto n = read_u64(head);
  return n >= 2 && n <= kMaxHeader && head[8] == '{';
}

SafeTensors read_safetensors(const std::string& path,
                             const std::function<void(std::uint64_t)>& on_tensor) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw classify::ClassifyError("cannot open '" + path + "'");
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  char len[8];
  if (size < 8 || !in.read(len, 8)) bad(path, "shorter than its 8-byte header length");
  const auto header_size = read_u64(len);
  if (header_size > kMaxHeader || header_size > size - 8)
    bad(path, "header length " + std::to_string(header_size) + " exceeds the file");
  std::string header(header_size, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_size));
  boost::system::error_code ec;
  const auto doc = json::parse(header, ec);
  if (ec || !doc.is_object()) bad(path, "the header is not a JSON object");
  const std::uint64_t data_size = size - 8 - header_size;
  SafeTensors out;
  std::vector<StoredTensor> stored;
  for (const auto& [key, value] : doc.as_object()) {
    const std::string name(key);
    const auto* entry = value.if_object();
    if (entry == nullptr) bad(path, "entry '" + name + "' is not an object");
    if (name == "__metadata__") {
      for (const auto& [k, v] : *entry)
        if (const auto* s = v.if_string()) out.metadata[std::string(k)] = std::string(*s);
      continue;
    }
    const auto* dtype = entry->if_contains("dtype");
    const auto* offsets = entry->if_contains("data_offsets");
    if (dtype == nullptr || !dtype->is_string() || offsets == nullptr || !offsets->is_array() ||
        offsets->as_array().size() != 2 || !offsets->as_array()[0].is_int64() ||
        !offsets->as_array()[1].is_int64())
      bad(path, "tensor '" + name + "' lacks dtype or data_offsets");
    const auto width = dtype_size(dtype->as_string());
    if (width == 0)
      bad(path, "tensor '" + name + "' has dtype " + std::string(dtype->as_string()) +
                    " (F32, F16 and BF16 are supported)");
    StoredTensor t{name, std::string(dtype->as_string()), width, {}, 0, 0};
    t.shape = read_shape(entry->contains("shape") ? entry->at("shape") : json::value(), path, name,
                         width);
    const auto begin = offsets->as_array()[0].as_int64();
    const auto end = offsets->as_array()[1].as_int64();
    if (begin < 0 || end < begin || static_cast<std::uint64_t>(end) > data_size ||
        static_cast<std::uint64_t>(end - begin) != elements_of(t.shape) * width)
      bad(path, "tensor '" + name + "' has data_offsets that do not match its shape or the file");
    t.begin = static_cast<std::uint64_t>(begin);
    t.end = static_cast<std::uint64_t>(end);
    stored.push_back(std::move(t));
  }
  require_tiling(path, stored, data_size);
  for (auto& s : stored) {
    SafeTensor t;
    t.shape = std::move(s.shape);
    t.values.resize(t.elements());
    read_values(in, path, 8 + header_size, s, t.values);
    out.tensors.emplace(s.name, std::move(t));
    if (on_tensor) on_tensor(s.end - s.begin);
  }
  return out;
}

std::string safetensors_bytes(const SafeTensors& file) {
  json::object header;
  if (!file.metadata.empty()) {
    json::object meta;
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::size_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (t.values.size() != t.elements())
      throw classify::ClassifyError("tensor '" + name + "' has " + std::to_string(t.values.size()) +
                                    " values for its shape");
    json::array shape;
    for (const auto d : t.shape) shape.emplace_back(d);
    const auto bytes = t.values.size() * sizeof(float);
    header[name] = {{"dtype", "F32"},
                    {"shape", std::move(shape)},
                    {"data_offsets", json::array{offset, offset + bytes}}};
    offset += bytes;
  }
  auto text = json::serialize(header);
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned, as the spec advises
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : file.tensors)
    out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  return out;
}

}  // namespace mcpclass::checkpoint
