// Internal: the `server.http.auth.jwt` section, read into JwtAuthOptions.
// Thread-safety: a plain function.
#pragma once

#include "mcpclass/transport/server/jwt_auth.hpp"

#include <boost/json/value.hpp>

#include <string>

namespace mcpclass::transport::server::detail {

/// Strict: unknown keys, wrong types, missing resource/issuer, not exactly one of jwks_file and
/// jwks_url, and values out of range throw util::ConfigError naming the key under `path`.
JwtAuthOptions read_jwt_auth_options(const boost::json::value& section, const std::string& path);

}  // namespace mcpclass::transport::server::detail
