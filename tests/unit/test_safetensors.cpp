// The safetensors reader and writer: round trip, BF16 widening, and clear errors for every kind
// of damaged file.
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/errors.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using namespace mcpclass::checkpoint;

namespace {

std::string temp_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "mcpclass-safetensors-test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_raw(const std::string& path, const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::ofstream(path, std::ios::binary) << out << header << data;
}

std::string error_of(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const ClassifyError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("safetensors: round trip keeps shapes, values and metadata") {
  const auto path = temp_file("round.safetensors");
  SafeTensors file;
  file.metadata["architecture"] = "test";
  file.tensors["w"] = {{2, 3}, {1, -2, 3.5f, 0, 1e-8f, -7}};
  file.tensors["b"] = {{3}, {0.25f, 0.5f, 0.75f}};
  detail::write_safetensors(path, file);
  CHECK(looks_like_safetensors(path));
  const auto back = read_safetensors(path);
  CHECK(back.metadata.at("architecture") == "test");
  CHECK(back.tensors.at("w").shape == std::vector<std::int64_t>{2, 3});
  CHECK(back.tensors.at("w").values == file.tensors["w"].values);
  CHECK(back.require("b", {3}, path).values == file.tensors["b"].values);
  CHECK_THROWS_WITH_AS(back.require("b", {4}, path), doctest::Contains("'b' is 3, expected 4"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(back.require("c", {1}, path), doctest::Contains("no tensor 'c'"),
                       ClassifyError);
}

TEST_CASE("safetensors: BF16 tensors are widened to float") {
  const auto path = temp_file("bf16.safetensors");
  // 1.0 = 0x3F80, -2.0 = 0xC000 as bfloat16 (little-endian bytes).
  write_raw(path, R"({"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})",
            std::string("\x80\x3F\x00\xC0", 4));
  CHECK(read_safetensors(path).tensors.at("x").values == std::vector<float>{1.0f, -2.0f});
}

TEST_CASE("safetensors: F16 tensors are widened to float, subnormals and infinity included") {
  const auto path = temp_file("f16.safetensors");
  // 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF, 2^-24 = 0x0001, -0.0 = 0x8000, inf = 0x7C00.
  write_raw(path, R"({"x":{"dtype":"F16","shape":[6],"data_offsets":[0,12]}})",
            std::string("\x00\x3C\x00\xC0\xFF\x7B\x01\x00\x00\x80\x00\x7C", 12));
  const auto v = read_safetensors(path).tensors.at("x").values;
  REQUIRE(v.size() == 6);
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == -2.0f);
  CHECK(v[2] == 65504.0f);
  CHECK(v[3] == 0x1p-24f);
  CHECK((v[4] == 0.0f && std::signbit(v[4])));
  CHECK(std::isinf(v[5]));
}

TEST_CASE("safetensors: damaged files get errors naming the problem") {
  const auto path = temp_file("bad.safetensors");
  CHECK(error_of(temp_file("missing.safetensors")).find("cannot open") != std::string::npos);
  std::ofstream(path, std::ios::binary) << "abc";
  CHECK(error_of(path).find("8-byte header") != std::string::npos);
  CHECK_FALSE(looks_like_safetensors(path));
  write_raw(path, "{not json", "");
  CHECK(error_of(path).find("not a JSON object") != std::string::npos);
  write_raw(path, R"({"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, 0));
  CHECK(error_of(path).find("dtype I64") != std::string::npos);
  write_raw(path, R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, 0));
  CHECK(error_of(path).find("do not match") != std::string::npos);
  write_raw(path, R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, 0));
  CHECK(error_of(path).find("malformed shape") != std::string::npos);
  // 2^32 × 2^32 elements wrap to 0 in 64 bits: an empty byte range must not stand for them.
  write_raw(path, R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
            "");
  CHECK(error_of(path).find("tensor 'x' has a shape larger than the file's data") !=
        std::string::npos);
  // 2^63 elements fit 64 bits, their 2^65 bytes do not (fuzz_checkpoint: length_error, a crash).
  write_raw(path, R"({"x":{"dtype":"F32","shape":[2147483648,4294967296],"data_offsets":[0,0]}})",
            "");
  CHECK(error_of(path).find("tensor 'x' has a shape larger than the file's data") !=
        std::string::npos);
  write_raw(path, R"({"x":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})",
            "");
  CHECK(error_of(path) == "");
  {
    std::string out(8, '\0');
    const std::uint64_t n = 1ull << 40;
    std::memcpy(out.data(), &n, 8);
    std::ofstream(path, std::ios::binary) << out << "{}";
  }
  CHECK(error_of(path).find("exceeds the file") != std::string::npos);
}

TEST_CASE("safetensors: byte ranges must tile the data, without overlaps or gaps") {
  // Issue 47: 300 entries naming the same 1 MiB were each read into their own copy (629 MB RSS
  // for a 1.07 MB file). The format's rule: each byte of the data belongs to exactly one tensor.
  const auto path = temp_file("tiling.safetensors");
  write_raw(path,
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            std::string(8, 0));
  CHECK(error_of(path) == "'" + path +
                              "' is not a valid safetensors file: tensor 'b' [0, 8) overlaps "
                              "tensor 'a' [0, 8) (each byte of the data belongs to one tensor)");
  write_raw(path,
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            std::string(12, 0));
  CHECK(error_of(path).find("tensor 'b' [4, 12) overlaps tensor 'a' [0, 8)") != std::string::npos);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, 0));
  CHECK(error_of(path).find("the data has a gap: bytes [0, 4) belong to no tensor") !=
        std::string::npos);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(8, 0));
  CHECK(error_of(path).find("the data has 4 bytes after the last tensor's") != std::string::npos);
  // Listed in any order, empty tensors included, ranges that tile are read.
  write_raw(path,
            R"({"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},)"
            R"("e":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
            R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
            std::string("\x00\x00\x80\x3F\x80\x3F\x00\xC0", 8));
  const auto file = read_safetensors(path);
  CHECK(file.tensors.at("a").values == std::vector<float>{1.0f});
  CHECK(file.tensors.at("b").values == std::vector<float>{1.0f, -2.0f});
  CHECK(file.tensors.at("e").values.empty());
}
