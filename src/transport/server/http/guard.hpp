// Request checks of the HTTP transport: Host/Origin allow-list against DNS rebinding, the bearer
// token, and media types. Pure functions; reentrant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::transport::server {

/// The host part of a Host header value or authority: "[::1]:8080" → "[::1]", "a.b:1" → "a.b".
std::string_view host_without_port(std::string_view authority);
/// localhost, 127.0.0.1 and [::1] (case-insensitive, any port).
bool is_local_host(std::string_view host);

/// True when the Host header names a local host or one of `allowed` ("*" allows any).
bool host_allowed(std::string_view host_header, const std::vector<std::string>& allowed);
/// True for an absent Origin, a local origin, or one in `allowed` (full origin or host name).
bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed);

/// Compares `Authorization: Bearer <token>` with the expected token in constant time.
bool bearer_matches(std::string_view authorization, std::string_view expected);
/// True when the bearer token is one of `tokens`; every token is compared (constant time).
bool bearer_matches_any(std::string_view authorization, const std::vector<std::string>& tokens);

/// True when a Content-Type value names `type` (parameters and case ignored).
bool media_type_is(std::string_view content_type, std::string_view type);
/// True when an Accept value lists `type` (or its wildcard). An empty Accept accepts anything.
bool accepts(std::string_view accept, std::string_view type);
/// True when an Accept value mentions text/event-stream (case-insensitive); empty → false.
bool lists_event_stream(std::string_view accept);

}  // namespace mcpclass::transport::server
