// What the C ABI's translation units share: the handle structs behind the opaque types, the
// exception-to-status guard and the helpers that pack results into single allocations.
#pragma once

#include "mcpclass/mcpclass.h"

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/limits.hpp"

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

struct mcpc_error {
  int code = MCPC_OK;
  std::string message;
  std::string path;
};

struct mcpc_config {
  mcpclass::config::Config config;
};

struct mcpc_classifier {
  std::shared_ptr<const mcpclass::classify::Classifier> classifier;
  /// provenance_of(*classifier, 1), computed when the handle is made.
  mcpclass::classify::Provenance provenance;
  std::size_t max_text_length = mcpclass::util::limits::kMaxTextLength;
  /// `server.admission` of the configuration; null: calls are not bounded.
  std::shared_ptr<mcpclass::util::AdmissionGate> admission;
  /// `server.max_rerank_documents` of the configuration.
  std::size_t max_rerank_documents = 128;
};

namespace mcpclass::capi {

/// Thrown inside the C ABI to fail with a given status; caught by guard().
class Failure : public std::runtime_error {
 public:
  Failure(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

[[noreturn]] inline void fail(int code, const std::string& message) {
  throw Failure(code, message);
}

/// Fails with MCPC_ERR_INVALID_ARGUMENT when `p` is NULL.
template <class T>
void require(const T* p, const char* what) {
  if (p == nullptr) fail(MCPC_ERR_INVALID_ARGUMENT, std::string(what) + " must not be NULL");
}

/// The text of a (pointer, length) argument; MCPC_NTS means NUL-terminated.
inline std::string_view text_arg(const char* text, std::size_t len, const char* what) {
  require(text, what);
  return len == MCPC_NTS ? std::string_view(text) : std::string_view(text, len);
}

/// Stores a new error in *err (when err is not NULL). Never throws: on allocation failure *err
/// stays NULL and the status alone reports the failure.
int set_error(mcpc_error** err, int code, std::string_view message,
              std::string_view path = {}) noexcept;

/// Maps the current exception to a status (and *err). Call only inside a catch block.
int translate_exception(mcpc_error** err) noexcept;

/// Runs `body` (returning a status), clearing *err first and turning every exception into a
/// status and an error. Nothing escapes.
template <class F>
int guard(mcpc_error** err, F&& body) noexcept {
  if (err != nullptr) *err = nullptr;
  try {
    return std::forward<F>(body)();
  } catch (...) {
    return translate_exception(err);
  }
}

/// Two-pass bump allocator for results that live in one malloc block (freed with std::free).
/// With a null base it only measures; with a base it also writes.
class Cursor {
 public:
  explicit Cursor(char* base = nullptr) : base_(base) {}
  bool writing() const { return base_ != nullptr; }
  std::size_t size() const { return offset_; }

  template <class T>
  T* take(std::size_t count) {
    offset_ = (offset_ + alignof(T) - 1) / alignof(T) * alignof(T);
    T* p = base_ != nullptr ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(T);
    return p;
  }
  /// A NUL-terminated copy of `s` (nullptr while measuring).
  const char* str(std::string_view s);

 private:
  char* base_;
  std::size_t offset_ = 0;
};

/// Measures with `fill(Cursor&)`, allocates, fills for real. `fill` returns the T* it placed
/// first. Throws std::bad_alloc.
template <class T, class F>
T* pack(F&& fill) {
  Cursor measure;
  fill(measure);
  void* block = std::malloc(measure.size() == 0 ? 1 : measure.size());
  if (block == nullptr) throw std::bad_alloc();
  Cursor write(static_cast<char*>(block));
  return fill(write);
}

/// A heap copy of `s` for the caller to release with mcpc_string_free.
char* dup_string(std::string_view s);

}  // namespace mcpclass::capi
