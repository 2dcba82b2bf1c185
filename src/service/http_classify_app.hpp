// Internal: the http_classify contract served on a ClassificationService's HTTP front
// (http_classify_wire.hpp has the shapes): an HttpApp, so the front's Host/Origin checks, bearer
// tokens, JWT scopes (those of classify_text, or of the token classifier's tool for
// /classify/spans), body limit (413) and request counters (route label "classify") apply as on
// every other endpoint. Models run on the service's worker pool, rules on the I/O thread (as
// classify_text's run_inline).
// Thread-safety: handle() may be called concurrently from the server's I/O threads.
#pragma once

#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "mcpclass/util/span_record.hpp"

#include <memory>

namespace mcpclass::service::detail {

/// The app answering POST /classify and /classify/spans for `service`, which must outlive it.
/// Each answered request's spans (the request, its classification) go to `spans` (null: none),
/// under the caller's `traceparent`.
std::shared_ptr<transport::server::HttpApp> make_http_classify_app(
    const ClassificationService& service, std::shared_ptr<util::SpanSink> spans = nullptr);

}  // namespace mcpclass::service::detail
