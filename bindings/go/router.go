package mcpclass

/*
#include <stdlib.h>
#include "mcpclass/mcpclass.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// RouteEvaluation is what `mcpclass route` would do with a chat completion request: Action
// "forward" (send Body to Model's upstream, or, when that upstream cannot be reached, each of
// Fallbacks in order; answer with Headers; UpstreamHeadersRemoved then UpstreamHeaders mutate
// the upstream request's headers), "passthrough" (the request named a configured model),
// "reject" or "block" (answer Status with Headers and Error, OpenAI's error document).
type RouteEvaluation struct {
	Action          string            `json:"action"`
	Model           string            `json:"model"`
	Decision        string            `json:"decision"`
	Category        string            `json:"category"`
	Confidence      float64           `json:"confidence"`
	UseReasoning    bool              `json:"use_reasoning"`
	Body            json.RawMessage   `json:"body,omitempty"`
	Headers         map[string]string `json:"headers"`
	UpstreamHeaders map[string]string `json:"upstream_headers"`
	// UpstreamHeadersRemoved are the header names the decision deletes from the upstream request.
	UpstreamHeadersRemoved []string          `json:"upstream_headers_removed"`
	Fallbacks              []RouteFallback   `json:"fallbacks,omitempty"`
	Status                 int               `json:"status,omitempty"`
	Error                  json.RawMessage   `json:"error,omitempty"`
	BlockReason            string            `json:"block_reason,omitempty"`
	Signals                []json.RawMessage `json:"signals"`
	Decisions              []json.RawMessage `json:"decisions"`
}

// RouteFallback is one model of the fallback chain and the exact body for its upstream.
type RouteFallback struct {
	Model string          `json:"model"`
	Body  json.RawMessage `json:"body"`
}

// Router is the semantic router of a configuration (its route and routing sections): the
// evaluation `mcpclass route` forwards, without the forwarding. Safe for concurrent use; Close
// it when done.
type Router struct {
	mu sync.RWMutex
	c  *C.mcpc_router
}

// OpenRouter builds the router of a configuration document. classifier (nil: built from the
// configuration) is what its domain signals read.
func OpenRouter(config string, classifier *Classifier) (*Router, error) {
	cfg, err := newConfig(config)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openRouterWith(cfg, classifier)
}

// OpenRouterFile is OpenRouter for a configuration file.
func OpenRouterFile(path string, classifier *Classifier) (*Router, error) {
	cfg, err := newConfigFromFile(path)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openRouterWith(cfg, classifier)
}

func openRouterWith(cfg *C.mcpc_config, classifier *Classifier) (*Router, error) {
	var r *C.mcpc_router
	var cerr *C.mcpc_error
	var cls *C.mcpc_classifier
	if classifier != nil {
		classifier.mu.RLock()
		defer classifier.mu.RUnlock()
		if classifier.c == nil {
			return nil, ErrClosed
		}
		cls = classifier.c
	}
	if err := toError(C.mcpc_router_new(cfg, cls, &r, &cerr), cerr); err != nil {
		return nil, err
	}
	out := &Router{c: r}
	runtime.SetFinalizer(out, (*Router).Close)
	return out, nil
}

// Close releases the router. Idempotent.
func (r *Router) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		C.mcpc_router_free(r.c)
		r.c = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

// EvaluateJSON returns the evaluation document of a chat completion request body (explain: every
// decision evaluated, as POST /v1/route/explain).
func (r *Router) EvaluateJSON(request []byte, explain bool) ([]byte, error) {
	return r.EvaluateAPIJSON("chat_completions", request, explain)
}

// EvaluateAPIJSON is EvaluateJSON for a request body of api: "chat_completions", "messages"
// (Anthropic's Messages API) or "responses" (OpenAI's Responses API).
func (r *Router) EvaluateAPIJSON(api string, request []byte, explain bool) ([]byte, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.c == nil {
		return nil, ErrClosed
	}
	capi := C.CString(api)
	defer C.free(unsafe.Pointer(capi))
	creq := C.CBytes(request)
	defer C.free(creq)
	flag := C.int(0)
	if explain {
		flag = 1
	}
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_route_evaluate_api_json(r.c, capi, (*C.char)(creq), C.size_t(len(request)), flag, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// Evaluate is EvaluateJSON decoded.
func (r *Router) Evaluate(request []byte) (*RouteEvaluation, error) {
	raw, err := r.EvaluateJSON(request, false)
	if err != nil {
		return nil, err
	}
	var e RouteEvaluation
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	return &e, nil
}
