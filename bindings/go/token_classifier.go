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

// Span is one labelled span of a text (a PII detector's e-mail address, name, phone number).
// Start and End count Unicode code points, as the transformers pipeline reports them;
// ByteStart and ByteEnd index the UTF-8 bytes of the Go string (text[ByteStart:ByteEnd]).
type Span struct {
	EntityGroup string  `json:"entity_group,omitempty"` // the label without B-/I-
	Entity      string  `json:"entity,omitempty"`       // aggregation "none": the token's label
	Score       float64 `json:"score"`
	Word        string  `json:"word"`
	Start       int     `json:"start"`
	End         int     `json:"end"`
	ByteStart   int     `json:"byte_start"`
	ByteEnd     int     `json:"byte_end"`
	Index       *int    `json:"index,omitempty"` // aggregation "none": the token's index
}

// TokenClassifier is the token_classifier section of a configuration: a Hugging Face
// *ForTokenClassification checkpoint whose spans merge as the transformers
// token-classification pipeline merges them. Safe for concurrent use; Close it when done.
type TokenClassifier struct {
	mu sync.RWMutex
	c  *C.mcpc_token_classifier
}

// OpenTokenClassifier builds the token classifier of a configuration document's
// token_classifier section.
func OpenTokenClassifier(config string) (*TokenClassifier, error) {
	cfg, err := newConfig(config)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openTokenClassifierWith(cfg)
}

// OpenTokenClassifierFile is OpenTokenClassifier for a configuration file.
func OpenTokenClassifierFile(path string) (*TokenClassifier, error) {
	cfg, err := newConfigFromFile(path)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openTokenClassifierWith(cfg)
}

func openTokenClassifierWith(cfg *C.mcpc_config) (*TokenClassifier, error) {
	var c *C.mcpc_token_classifier
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_token_classifier_new(cfg, &c, &cerr), cerr); err != nil {
		return nil, err
	}
	t := &TokenClassifier{c: c}
	runtime.SetFinalizer(t, (*TokenClassifier).Close)
	return t, nil
}

// Close releases the token classifier. Idempotent.
func (t *TokenClassifier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c != nil {
		C.mcpc_token_classifier_free(t.c)
		t.c = nil
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

// DetectJSON returns exactly the structuredContent of the MCP tool:
// {"spans":[...],"aggregation":"simple"}. aggregation "" uses the configured strategy; else
// "none", "simple", "first", "average" or "max".
func (t *TokenClassifier) DetectJSON(text, aggregation string) ([]byte, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.c == nil {
		return nil, ErrClosed
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var cagg *C.char
	if aggregation != "" {
		cagg = C.CString(aggregation)
		defer C.free(unsafe.Pointer(cagg))
	}
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_detect_spans_json(t.c, ctext, C.size_t(len(text)), cagg, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// Detect returns the spans of text (see DetectJSON for aggregation).
func (t *TokenClassifier) Detect(text, aggregation string) ([]Span, error) {
	raw, err := t.DetectJSON(text, aggregation)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Spans []Span `json:"spans"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return doc.Spans, nil
}
