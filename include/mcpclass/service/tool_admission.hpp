// classify_text and the token-classification tool under `server.admission`: the engine's
// ToolAdmit for a util::AdmissionGate. A call takes a place or is refused at once with JSON-RPC
// error -32010 (server::kOverloaded); its deadline, `_meta["io.mcpclass/timeoutMs"]`
// (server::kMetaRequestTimeout, which the HTTP transports also take from the X-Request-Timeout-Ms
// header), is checked when it is admitted and again when its turn comes. A classify_text text the
// result cache holds needs no place.
// Thread-safety: the returned function may be called from any thread.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/util/admission_gate.hpp"

#include <memory>

namespace mcpclass::service {

/// The admission of classify_text calls through `gate`; `classifier` is asked whether its cache
/// holds a call's text (when it is a classify::CachedClassifier).
server::ToolAdmit classify_admission(std::shared_ptr<util::AdmissionGate> gate,
                                     std::shared_ptr<const classify::Classifier> classifier);

/// The admission of any other slow tool's calls through `gate` (the token-classification tool:
/// a span call runs a model as classify_text does, so it takes a place in the same gate).
server::ToolAdmit gated_admission(std::shared_ptr<util::AdmissionGate> gate);

}  // namespace mcpclass::service
