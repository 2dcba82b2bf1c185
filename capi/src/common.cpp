// Versions, errors, strings and configuration documents.
#include "internal.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/remote/remote_classifier.hpp"

#include <cstdlib>
#include <cstring>

using namespace mcpclass;

namespace mcpclass::capi {

int set_error(mcpc_error** err, int code, std::string_view message,
              std::string_view path) noexcept {
  if (err == nullptr) return code;
  try {
    auto* e = new mcpc_error;
    e->code = code;
    e->message.assign(message);
    e->path.assign(path);
    *err = e;
  } catch (...) {
    *err = nullptr;
  }
  return code;
}

int translate_exception(mcpc_error** err) noexcept {
  try {
    throw;
  } catch (const Failure& e) {
    return set_error(err, e.code(), e.what());
  } catch (const remote::RemoteError& e) {
    const bool unavailable = e.transient() || e.failure() == remote::RemoteFailure::circuit_open;
    return set_error(err, unavailable ? MCPC_ERR_UNAVAILABLE : MCPC_ERR_CLASSIFY, e.what());
  } catch (const classify::ConfigError& e) {
    return set_error(err, MCPC_ERR_CONFIG, e.what(), e.path());
  } catch (const classify::ClassifyError& e) {
    return set_error(err, MCPC_ERR_CLASSIFY, e.what());
  } catch (const std::bad_alloc&) {
    return set_error(err, MCPC_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return set_error(err, MCPC_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(err, MCPC_ERR_INTERNAL, "internal error: unknown exception");
  }
}

const char* Cursor::str(std::string_view s) {
  char* p = take<char>(s.size() + 1);
  if (p == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

char* dup_string(std::string_view s) {
  auto* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

}  // namespace mcpclass::capi

using namespace mcpclass::capi;

extern "C" {

const char* mcpc_version(void) {
  return MCPC_VERSION_STRING;
}

int mcpc_abi_version(void) {
  return MCPC_ABI_VERSION;
}

int mcpc_error_code(const mcpc_error* error) {
  return error == nullptr ? MCPC_OK : error->code;
}

const char* mcpc_error_message(const mcpc_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

const char* mcpc_error_path(const mcpc_error* error) {
  return error == nullptr ? "" : error->path.c_str();
}

void mcpc_error_free(mcpc_error* error) {
  delete error;
}

const char* mcpc_status_name(int status) {
  switch (status) {
    case MCPC_OK:
      return "MCPC_OK";
    case MCPC_ERR_INVALID_ARGUMENT:
      return "MCPC_ERR_INVALID_ARGUMENT";
    case MCPC_ERR_NO_MEMORY:
      return "MCPC_ERR_NO_MEMORY";
    case MCPC_ERR_CONFIG:
      return "MCPC_ERR_CONFIG";
    case MCPC_ERR_INVALID_TEXT:
      return "MCPC_ERR_INVALID_TEXT";
    case MCPC_ERR_CLASSIFY:
      return "MCPC_ERR_CLASSIFY";
    case MCPC_ERR_STATE:
      return "MCPC_ERR_STATE";
    case MCPC_ERR_TRANSPORT:
      return "MCPC_ERR_TRANSPORT";
    case MCPC_ERR_NOT_FOUND:
      return "MCPC_ERR_NOT_FOUND";
    case MCPC_ERR_UNAVAILABLE:
      return "MCPC_ERR_UNAVAILABLE";
    case MCPC_ERR_OVERLOADED:
      return "MCPC_ERR_OVERLOADED";
    case MCPC_ERR_INTERNAL:
      return "MCPC_ERR_INTERNAL";
    default:
      return "MCPC_ERR_UNKNOWN";
  }
}

void mcpc_string_free(char* string) {
  std::free(string);
}

int mcpc_config_new(const char* text, size_t text_len, mcpc_config** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    const std::string_view document =
        text == nullptr ? std::string_view{} : text_arg(text, text_len, "text");
    auto config = std::make_unique<mcpc_config>(mcpc_config{config::parse_config(document)});
    *out = config.release();
    return MCPC_OK;
  });
}

int mcpc_config_new_from_file(const char* path, mcpc_config** out, mcpc_error** err) {
  return guard(err, [&] {
    require(out, "out");
    *out = nullptr;
    require(path, "path");
    auto config = std::make_unique<mcpc_config>(mcpc_config{config::load_config_file(path)});
    *out = config.release();
    return MCPC_OK;
  });
}

void mcpc_config_free(mcpc_config* config) {
  delete config;
}

}  // extern "C"
