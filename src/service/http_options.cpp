#include "mcpclass/service/http_options.hpp"

namespace mcpclass::service {

transport::HttpServerOptions http_server_options(const config::HttpSettings& http) {
  transport::HttpServerOptions o;
  o.host = http.host;
  o.port = http.port;
  o.io_threads = http.io_threads.value_or(o.io_threads);
  o.max_sessions = http.max_sessions.value_or(o.max_sessions);
  o.max_sse_streams = http.max_sse_streams.value_or(o.max_sse_streams);
  o.event_store_session_bytes =
      http.event_store_session_bytes.value_or(o.event_store_session_bytes);
  o.max_sse_streams_per_client =
      http.max_sse_streams_per_client.value_or(o.max_sse_streams_per_client);
  o.max_connections = http.max_connections.value_or(o.max_connections);
  o.max_body_bytes = http.max_body_bytes.value_or(o.max_body_bytes);
  o.max_header_bytes = http.max_header_bytes.value_or(o.max_header_bytes);
  o.event_store_size = http.event_store_size.value_or(o.event_store_size);
  o.event_store_bytes = http.event_store_bytes.value_or(o.event_store_bytes);
  o.event_store_total_bytes = http.event_store_total_bytes.value_or(o.event_store_total_bytes);
  o.session_idle_timeout = http.session_idle_timeout.value_or(o.session_idle_timeout);
  o.read_timeout = http.read_timeout.value_or(o.read_timeout);
  o.idle_timeout = http.idle_timeout.value_or(o.idle_timeout);
  o.write_timeout = http.write_timeout.value_or(o.write_timeout);
  o.sse_heartbeat = http.sse_heartbeat.value_or(o.sse_heartbeat);
  o.shutdown_timeout = http.shutdown_timeout.value_or(o.shutdown_timeout);
  o.tls_cert_file = http.tls_cert_file;
  o.tls_key_file = http.tls_key_file;
  return o;
}

}  // namespace mcpclass::service
