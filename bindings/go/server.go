package mcpclass

/*
#include <stdlib.h>
#include "mcpclass/mcpclass.h"

extern void mcpcgo_tool_bridge(void *, const char *, size_t, mcpc_tool_reply *);
extern void mcpcgo_destroy_bridge(void *);
*/
import "C"

import (
	"encoding/json"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// ToolResult is what a Go tool answers: Structured (any JSON-marshalable object) becomes the
// result's structuredContent and text; otherwise Text is the one text block. IsError marks a
// failure the model should see.
type ToolResult struct {
	Text       string
	Structured any
	IsError    bool
}

// ToolFunc runs a tool. args is the JSON object of arguments, already validated against the
// tool's schema. It runs on the server's worker threads, possibly concurrently; an error (or a
// panic) becomes an isError result carrying its message.
type ToolFunc func(args json.RawMessage) (ToolResult, error)

type registeredTool struct {
	name string
	fn   ToolFunc
}

// Server is an MCP server: the classification tools (classify_text, list_categories, prompts,
// the categories resource) plus tools registered from Go, over HTTP, stdio or in-process calls.
// Safe for concurrent use.
type Server struct {
	mu    sync.RWMutex
	s     *C.mcpc_server
	stdio []*os.File // kept open while the stdio transport may use them
}

// NewServer makes a server from a configuration document ("" = default). classifier may be nil
// (the configured one is built) or a Classifier (for example a host classifier), which the
// server keeps alive.
func NewServer(config string, classifier *Classifier) (*Server, error) {
	cfg, err := newConfig(config)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	var cc *C.mcpc_classifier
	if classifier != nil {
		classifier.mu.RLock()
		defer classifier.mu.RUnlock()
		if classifier.c == nil {
			return nil, ErrClosed
		}
		cc = classifier.c
	}
	var s *C.mcpc_server
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_server_new(cfg, cc, &s, &cerr), cerr); err != nil {
		return nil, err
	}
	srv := &Server{s: s}
	runtime.SetFinalizer(srv, (*Server).Close)
	return srv, nil
}

// RegisterTool adds (or replaces) a tool. schema is its JSON Schema for the arguments ("" =
// any object); description may be "".
func (s *Server) RegisterTool(name, description, schema string, fn ToolFunc) error {
	if fn == nil {
		return &Error{Code: ErrInvalidArgument.Code, Status: ErrInvalidArgument.Status, Message: "fn must not be nil"}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return ErrClosed
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cdesc, cschema *C.char
	if description != "" {
		cdesc = C.CString(description)
		defer C.free(unsafe.Pointer(cdesc))
	}
	if schema != "" {
		cschema = C.CString(schema)
		defer C.free(unsafe.Pointer(cschema))
	}
	slot := newCallbackSlot(&registeredTool{name: name, fn: fn})
	var cerr *C.mcpc_error
	status := C.mcpc_server_add_tool(s.s, cname, cdesc, cschema, C.mcpc_tool_callback(C.mcpcgo_tool_bridge),
		slot, C.mcpc_destroy_callback(C.mcpcgo_destroy_bridge), &cerr)
	if err := toError(status, cerr); err != nil {
		releaseCallbackSlot(slot)
		return err
	}
	return nil
}

// RemoveTool removes a tool (errors.Is(err, ErrNotFound) when there is none by that name).
func (s *Server) RemoveTool(name string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return ErrClosed
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.mcpc_error
	return toError(C.mcpc_server_remove_tool(s.s, cname, &cerr), cerr)
}

// Reload swaps in the classifier of config (YAML/JSON; "" for the embedded default) without a
// restart: calls in flight finish on the old classifier, later ones get the new one, and sessions
// are told what changed. It returns the generation now serving. A refused configuration returns
// an error (errors.Is(err, ErrConfig)) and the current classifier keeps serving.
func (s *Server) Reload(config string) (uint64, error) {
	cfg, err := newConfig(config)
	if err != nil {
		return 0, err
	}
	defer C.mcpc_config_free(cfg)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return 0, ErrClosed
	}
	var generation C.uint64_t
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_server_reload(s.s, cfg, &generation, &cerr), cerr); err != nil {
		return uint64(generation), err
	}
	return uint64(generation), nil
}

// Call serves one JSON-RPC message in-process (no initialize needed) and returns the response,
// or nil for a notification.
func (s *Server) Call(request []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return nil, ErrClosed
	}
	creq := C.CString(string(request))
	defer C.free(unsafe.Pointer(creq))
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_server_call(s.s, creq, C.size_t(len(request)), &out, &cerr), cerr); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// StartHTTP serves Streamable HTTP (POST /mcp, /health, /metrics, ...), with the /health and
// /metrics of `mcpclass serve` (mcpc_server_start_http). host "" and port -1 take the config's
// server.http values; port 0 picks a free port. Returns the bound port.
func (s *Server) StartHTTP(host string, port int) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return 0, ErrClosed
	}
	var chost *C.char
	if host != "" {
		chost = C.CString(host)
		defer C.free(unsafe.Pointer(chost))
	}
	var bound C.int
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_server_start_http(s.s, chost, C.int(port), &bound, &cerr), cerr); err != nil {
		return 0, err
	}
	return int(bound), nil
}

// Port is the bound HTTP port, 0 when HTTP is not running.
func (s *Server) Port() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(C.mcpc_server_http_port(s.s))
}

// StartStdio serves one client with newline-delimited JSON-RPC on in/out (e.g. os.Stdin,
// os.Stdout) in the background, until end of input or Stop. The files stay the caller's.
func (s *Server) StartStdio(in, out *os.File) error {
	s.mu.Lock() // also guards s.stdio
	defer s.mu.Unlock()
	if s.s == nil {
		return ErrClosed
	}
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_server_start_stdio(s.s, C.int(in.Fd()), C.int(out.Fd()), &cerr), cerr); err != nil {
		return err
	}
	s.stdio = []*os.File{in, out}
	return nil
}

// WaitStdio blocks until the stdio client has gone (end of input) or Stop was called.
func (s *Server) WaitStdio() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return ErrClosed
	}
	var cerr *C.mcpc_error
	return toError(C.mcpc_server_wait_stdio(s.s, &cerr), cerr)
}

// Stop stops every transport, answering what is in flight. Idempotent.
func (s *Server) Stop() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	C.mcpc_server_stop(s.s)
}

// Close stops the transports and releases the server. Idempotent.
func (s *Server) Close() error {
	s.Stop() // first, under the read lock: a blocked WaitStdio returns and lets go of it
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s != nil {
		C.mcpc_server_free(s.s)
		s.s = nil
		runtime.SetFinalizer(s, nil)
	}
	runtime.KeepAlive(s.stdio)
	s.stdio = nil
	return nil
}
