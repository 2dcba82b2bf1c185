// FNV-1a with 64 bits: the one checksum behind content ids (provenance's model, tokenizer and
// taxonomy ids, the learned caches' keys). Not cryptographic: it names content, it does not
// defend it. Thread-safety: a plain value; distinct objects may be used concurrently.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace mcpclass::util {

/// An incremental FNV-1a (64-bit) hash: mix() the bytes in order, then read value() or hex().
class Fnv1a64 {
 public:
  void mix(std::string_view bytes) noexcept {
    for (const char c : bytes) mix_byte(static_cast<unsigned char>(c));
  }
  void mix_byte(unsigned char byte) noexcept {
    hash_ ^= byte;
    hash_ *= 0x100000001b3ULL;
  }
  std::uint64_t value() const noexcept { return hash_; }
  /// value() as 16 lower-case hex digits.
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash_));
    return buf;
  }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace mcpclass::util
