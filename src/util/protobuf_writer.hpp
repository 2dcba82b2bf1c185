// Internal: the few protobuf wire-format writes mcpclass needs (a sentencepiece model, an OTLP
// export request), each field appended to a string; a nested message is written into a string
// of its own first and then appended as bytes, so that its length is known.
// Thread-safety: reentrant functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mcpclass::util::protobuf {

enum Wire : std::uint32_t { varint_wire = 0, fixed64_wire = 1, bytes_wire = 2, fixed32_wire = 5 };

inline void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void key(std::string& out, std::uint32_t field, Wire wire) {
  varint(out, (static_cast<std::uint64_t>(field) << 3) | wire);
}

/// A string, bytes or an embedded message.
inline void bytes_field(std::string& out, std::uint32_t field, std::string_view bytes) {
  key(out, field, bytes_wire);
  varint(out, bytes.size());
  out.append(bytes);
}

/// int32/int64/uint/enum/bool: a negative int is its 10-byte two's complement.
inline void int_field(std::string& out, std::uint32_t field, std::int64_t value) {
  key(out, field, varint_wire);
  varint(out, static_cast<std::uint64_t>(value));
}

/// Little-endian, as the wire format is (on little-endian hosts: x86-64, aarch64).
inline void fixed_field(std::string& out, std::uint32_t field, const void* value,
                        std::size_t size) {
  key(out, field, size == 8 ? fixed64_wire : fixed32_wire);
  out.append(static_cast<const char*>(value), size);
}

inline void float_field(std::string& out, std::uint32_t field, float value) {
  fixed_field(out, field, &value, 4);
}
inline void fixed32_field(std::string& out, std::uint32_t field, std::uint32_t value) {
  fixed_field(out, field, &value, 4);
}
inline void fixed64_field(std::string& out, std::uint32_t field, std::uint64_t value) {
  fixed_field(out, field, &value, 8);
}

}  // namespace mcpclass::util::protobuf
