// Package mcpclass classifies LLM queries in-process through the mcpclass C library
// (libmcpclass.so, found with pkg-config) and serves the classifier, plus tools written in Go,
// over the Model Context Protocol.
//
// Every result is copied into Go memory and the native memory is released in the same call.
// Classifier and Server are safe for concurrent use; Close them when done (a finalizer is only a
// safety net).
package mcpclass

/*
#cgo pkg-config: mcpclass
#include <stdlib.h>
#include "mcpclass/mcpclass.h"

extern int mcpcgo_classify_bridge(void *, const char *, size_t, double *, size_t, char *, size_t);
extern void mcpcgo_destroy_bridge(void *);
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ABIVersion is the C ABI this package was written for; Open refuses another.
const ABIVersion = 1

// Version is the loaded library's version ("0.1.0").
func Version() string { return C.GoString(C.mcpc_version()) }

// Error is a failure reported by the library: a stable status code, its name, a message and,
// for configuration errors, the key path.
type Error struct {
	Code    int
	Status  string // "MCPC_ERR_CONFIG", ...
	Message string
	Path    string // for configuration errors: the offending key, if any
}

func (e *Error) Error() string { return "mcpclass: " + e.Message }

// Is matches errors with the same code, so errors.Is(err, mcpclass.ErrInvalidText) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is, one per status code.
var (
	ErrInvalidArgument = &Error{Code: int(C.MCPC_ERR_INVALID_ARGUMENT), Status: "MCPC_ERR_INVALID_ARGUMENT"}
	ErrNoMemory        = &Error{Code: int(C.MCPC_ERR_NO_MEMORY), Status: "MCPC_ERR_NO_MEMORY"}
	ErrConfig          = &Error{Code: int(C.MCPC_ERR_CONFIG), Status: "MCPC_ERR_CONFIG"}
	ErrInvalidText     = &Error{Code: int(C.MCPC_ERR_INVALID_TEXT), Status: "MCPC_ERR_INVALID_TEXT"}
	ErrClassify        = &Error{Code: int(C.MCPC_ERR_CLASSIFY), Status: "MCPC_ERR_CLASSIFY"}
	ErrState           = &Error{Code: int(C.MCPC_ERR_STATE), Status: "MCPC_ERR_STATE"}
	ErrTransport       = &Error{Code: int(C.MCPC_ERR_TRANSPORT), Status: "MCPC_ERR_TRANSPORT"}
	ErrNotFound        = &Error{Code: int(C.MCPC_ERR_NOT_FOUND), Status: "MCPC_ERR_NOT_FOUND"}
	ErrUnavailable     = &Error{Code: int(C.MCPC_ERR_UNAVAILABLE), Status: "MCPC_ERR_UNAVAILABLE"} // remote down; retry later
	ErrOverloaded      = &Error{Code: int(C.MCPC_ERR_OVERLOADED), Status: "MCPC_ERR_OVERLOADED"}   // server.admission refused; retry later
	ErrInternal        = &Error{Code: int(C.MCPC_ERR_INTERNAL), Status: "MCPC_ERR_INTERNAL"}
)

// ErrClosed is returned by methods of a closed Classifier, Server or Router.
var ErrClosed = errors.New("mcpclass: already closed")

// toError turns a status and its error object into a Go error, releasing the object.
func toError(status C.int, cerr *C.mcpc_error) error {
	if status == C.MCPC_OK {
		return nil
	}
	defer C.mcpc_error_free(cerr)
	return &Error{
		Code:    int(status),
		Status:  C.GoString(C.mcpc_status_name(status)),
		Message: C.GoString(C.mcpc_error_message(cerr)),
		Path:    C.GoString(C.mcpc_error_path(cerr)),
	}
}

func checkABI() error {
	if got := int(C.mcpc_abi_version()); got != ABIVersion {
		return fmt.Errorf("mcpclass: libmcpclass has ABI %d, this package needs %d", got, ABIVersion)
	}
	return nil
}

// newConfig parses a configuration document; "" is the embedded default.
func newConfig(document string) (*C.mcpc_config, error) {
	if err := checkABI(); err != nil {
		return nil, err
	}
	var cfg *C.mcpc_config
	var cerr *C.mcpc_error
	if document == "" {
		return cfg, toError(C.mcpc_config_new(nil, 0, &cfg, &cerr), cerr)
	}
	cdoc := C.CString(document)
	defer C.free(unsafe.Pointer(cdoc))
	return cfg, toError(C.mcpc_config_new(cdoc, C.size_t(len(document)), &cfg, &cerr), cerr)
}

func newConfigFromFile(path string) (*C.mcpc_config, error) {
	if err := checkABI(); err != nil {
		return nil, err
	}
	var cfg *C.mcpc_config
	var cerr *C.mcpc_error
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return cfg, toError(C.mcpc_config_new_from_file(cpath, &cfg, &cerr), cerr)
}

// CategoryProbability is one category of a decision's ranking.
type CategoryProbability struct {
	Name        string
	Probability float64
}

// Decision is the entropy-based reasoning decision.
type Decision struct {
	UseReasoning  bool
	Confidence    float64
	Reason        string
	Strategy      string
	TopCategories []CategoryProbability
}

// Result is one classification.
type Result struct {
	Class         int       // index into Categories()
	Category      string    // its name
	Confidence    float64   // max(Probabilities)
	Probabilities []float64 // one per category, sums to 1
	Entropy       float64   // bits
	Model         string    // recommended model
	UseReasoning  bool      // the routing policy's answer
	Decision      Decision  // the entropy-based decision (diagnostics)
	Provenance    Provenance
	InScope       *float64 // a trained head's out-of-scope score in [0, 1] (low = far from its training rows); nil when the classifier has none
}

// Provenance says what produced a Result: the same fields as classify_text's
// _meta["io.mcpclass/provenance"] (mcpc_provenance).
type Provenance struct {
	Kind        string // the classifier kind ("rules", "trained_head", "host", ...)
	ModelID     string // checksum of the weights or rules ("fnv1a64:<16 hex digits>")
	TokenizerID string // checksum of the tokenizer's files; "" when the classifier has none
	TaxonomyID  string // checksum of the category names in class-index order
	Generation  uint64 // 1 for a Classifier (it never reloads)
	Cached      bool   // served from a result cache
	Fallback    bool   // a fallback answered (a composite's local side after its remote failed)
}

// Category is one configured category.
type Category struct {
	Name         string
	Description  string
	SystemPrompt string
	Model        string // "" when the routing policy chooses
	UseReasoning *bool  // nil when the routing policy decides
}

func copyDecision(d *C.mcpc_decision) Decision {
	out := Decision{
		UseReasoning: bool(d.use_reasoning),
		Confidence:   float64(d.confidence),
		Reason:       C.GoString(d.reason),
		Strategy:     C.GoString(d.strategy),
	}
	if n := int(d.num_top_categories); n > 0 {
		top := unsafe.Slice(d.top_categories, n)
		out.TopCategories = make([]CategoryProbability, n)
		for i := range top {
			out.TopCategories[i] = CategoryProbability{C.GoString(top[i].name), float64(top[i].probability)}
		}
	}
	return out
}

func copyResult(r *C.mcpc_result) Result {
	out := Result{
		Class:        int(r.class_index),
		Category:     C.GoString(r.category),
		Confidence:   float64(r.confidence),
		Entropy:      float64(r.entropy),
		Model:        C.GoString(r.model),
		UseReasoning: bool(r.use_reasoning),
		Decision:     copyDecision(&r.decision),
		Provenance: Provenance{
			Kind:        C.GoString(r.provenance.kind),
			ModelID:     C.GoString(r.provenance.model_id),
			TokenizerID: C.GoString(r.provenance.tokenizer_id),
			TaxonomyID:  C.GoString(r.provenance.taxonomy_id),
			Generation:  uint64(r.provenance.generation),
			Cached:      bool(r.provenance.cached),
			Fallback:    bool(r.provenance.fallback),
		},
	}
	if bool(r.has_in_scope) {
		v := float64(r.in_scope)
		out.InScope = &v
	}
	if n := int(r.num_probabilities); n > 0 {
		out.Probabilities = make([]float64, n)
		copy(out.Probabilities, unsafe.Slice((*float64)(unsafe.Pointer(r.probabilities)), n))
	}
	return out
}

// Classifier classifies texts. Safe for concurrent use.
type Classifier struct {
	mu sync.RWMutex
	c  *C.mcpc_classifier
}

func newClassifier(c *C.mcpc_classifier) *Classifier {
	cl := &Classifier{c: c}
	runtime.SetFinalizer(cl, (*Classifier).Close)
	return cl
}

// Open builds the classifier a configuration document describes (YAML or JSON text; "" is the
// embedded default with five categories and keyword rules).
func Open(config string) (*Classifier, error) {
	cfg, err := newConfig(config)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openWith(cfg)
}

// OpenFile is Open for a configuration file (.yaml, .yml or .json).
func OpenFile(path string) (*Classifier, error) {
	cfg, err := newConfigFromFile(path)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	return openWith(cfg)
}

func openWith(cfg *C.mcpc_config) (*Classifier, error) {
	var c *C.mcpc_classifier
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classifier_new(cfg, &c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newClassifier(c), nil
}

// ClassifyFunc is a host-defined classifier: it fills probabilities (one zeroed entry per
// category, in config order) with non-negative scores; the library normalises them, picks the
// class and applies the routing policy. It may be called from several goroutines at once.
type ClassifyFunc func(text string, probabilities []float64) error

// NewHostClassifier makes a classifier whose distribution comes from fn; categories, routing
// and limits come from config ("" = default).
func NewHostClassifier(config string, fn ClassifyFunc) (*Classifier, error) {
	if fn == nil {
		return nil, &Error{Code: ErrInvalidArgument.Code, Status: ErrInvalidArgument.Status, Message: "fn must not be nil"}
	}
	cfg, err := newConfig(config)
	if err != nil {
		return nil, err
	}
	defer C.mcpc_config_free(cfg)
	slot := newCallbackSlot(fn)
	var c *C.mcpc_classifier
	var cerr *C.mcpc_error
	status := C.mcpc_classifier_new_host(cfg, C.mcpc_classify_callback(C.mcpcgo_classify_bridge), slot,
		C.mcpc_destroy_callback(C.mcpcgo_destroy_bridge), &c, &cerr)
	if err := toError(status, cerr); err != nil {
		releaseCallbackSlot(slot) // the library never took it
		return nil, err
	}
	return newClassifier(c), nil
}

// Close releases the classifier; servers using it keep it alive. Idempotent.
func (c *Classifier) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		C.mcpc_classifier_free(c.c)
		c.c = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// Classify classifies one text.
func (c *Classifier) Classify(text string) (Result, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return Result{}, ErrClosed
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var r *C.mcpc_result
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classify(c.c, ctext, C.size_t(len(text)), &r, &cerr), cerr); err != nil {
		return Result{}, err
	}
	defer C.mcpc_result_free(r)
	return copyResult(r), nil
}

// ClassifyJSON returns what the MCP tool classify_text returns: the bare object
// {"class","confidence","model","use_reasoning"[,"probabilities","entropy"]}, or with toolResult
// the whole CallToolResult.
func (c *Classifier) ClassifyJSON(text string, probabilities, toolResult bool) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	var flags C.uint
	if probabilities {
		flags |= C.MCPC_JSON_PROBABILITIES
	}
	if toolResult {
		flags |= C.MCPC_JSON_TOOL_RESULT
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classify_json(c.c, ctext, C.size_t(len(text)), flags, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// ClassifyPairJSON classifies a sentence pair (an NLI premise and hypothesis, a cross-encoder's
// query and passage) together, as classify_text with text_pair answers it: the JSON of
// ClassifyJSON. A classifier of one text (any but kind transformer) fails with
// ErrInvalidArgument.
func (c *Classifier) ClassifyPairJSON(text, textPair string, probabilities, toolResult bool) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	var options C.mcpc_classify_options
	if probabilities {
		options.flags |= C.MCPC_JSON_PROBABILITIES
	}
	if toolResult {
		options.flags |= C.MCPC_JSON_TOOL_RESULT
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	cpair := C.CString(textPair)
	defer C.free(unsafe.Pointer(cpair))
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classify_pair_json(c.c, ctext, C.size_t(len(text)), cpair,
		C.size_t(len(textPair)), &options, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// RankedDocument is one document's place in a reranking: its position in the request's
// documents, its relevance (higher is better) and, when asked for, its text.
type RankedDocument struct {
	Index          int     `json:"index"`
	RelevanceScore float64 `json:"relevance_score"`
	Document       *struct {
		Text string `json:"text"`
	} `json:"document,omitempty"`
}

// RerankJSON answers the rerank tool's arguments, {"query", "documents", "top_n"?,
// "return_documents"?}, with its {"results": [{index, relevance_score, document?}]}, best
// first. A classifier that is no cross-encoder reranker fails with ErrInvalidArgument.
func (c *Classifier) RerankJSON(request []byte) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	crequest := C.CString(string(request))
	defer C.free(unsafe.Pointer(crequest))
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_rerank_json(c.c, crequest, C.size_t(len(request)), nil, &out, &cerr),
		cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	return []byte(C.GoString(out)), nil
}

// Tasks names the tasks of a base shared by several LoRA adapters (adapters: {task: DIR}): the
// one c answers first, then the others; empty for any other classifier.
func (c *Classifier) Tasks() ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	var out *C.char
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classifier_tasks_json(c.c, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_string_free(out)
	var names []string
	if err := json.Unmarshal([]byte(C.GoString(out)), &names); err != nil {
		return nil, fmt.Errorf("mcpclass: tasks: %w", err)
	}
	return names, nil
}

// Task is the classifier of one of Tasks() (what the MCP tool classify_<name> answers) over the
// same loaded base, which it keeps alive; ErrNotFound (errors.Is) for another name. Close it
// as any Classifier.
func (c *Classifier) Task(name string) (*Classifier, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out *C.mcpc_classifier
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classifier_task(c.c, cname, &out, &cerr), cerr); err != nil {
		return nil, err
	}
	return newClassifier(out), nil
}

// Rerank scores documents for query with the cross-encoder, best first (RerankJSON); topN 0
// keeps them all.
func (c *Classifier) Rerank(query string, documents []string, topN int) ([]RankedDocument, error) {
	request := map[string]any{"query": query, "documents": documents}
	if topN > 0 {
		request["top_n"] = topN
	}
	body, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	answer, err := c.RerankJSON(body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []RankedDocument `json:"results"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, fmt.Errorf("mcpclass: rerank answer: %w", err)
	}
	return out.Results, nil
}

// ClassifyBatch classifies many texts in one call; all or nothing (the error names the index).
func (c *Classifier) ClassifyBatch(texts []string) ([]Result, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	if len(texts) == 0 {
		return []Result{}, nil
	}
	// Pointers to C memory may live in Go memory: only the strings themselves are C copies.
	ptrs := make([]*C.char, len(texts))
	lens := make([]C.size_t, len(texts))
	for i, t := range texts {
		ptrs[i] = C.CString(t)
		lens[i] = C.size_t(len(t))
	}
	defer func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
	}()
	var batch *C.mcpc_batch
	var cerr *C.mcpc_error
	status := C.mcpc_classify_batch(c.c, &ptrs[0], &lens[0], C.size_t(len(texts)), &batch, &cerr)
	if err := toError(status, cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_batch_free(batch)
	items := unsafe.Slice(batch.results, int(batch.count))
	out := make([]Result, len(items))
	for i := range items {
		out[i] = copyResult(&items[i])
	}
	return out, nil
}

// Categories lists the categories in class-index order.
func (c *Classifier) Categories() ([]Category, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.c == nil {
		return nil, ErrClosed
	}
	var cats *C.mcpc_categories
	var cerr *C.mcpc_error
	if err := toError(C.mcpc_classifier_categories(c.c, &cats, &cerr), cerr); err != nil {
		return nil, err
	}
	defer C.mcpc_categories_free(cats)
	items := unsafe.Slice(cats.items, int(cats.count))
	out := make([]Category, len(items))
	for i, it := range items {
		out[i] = Category{
			Name:         C.GoString(it.name),
			Description:  C.GoString(it.description),
			SystemPrompt: C.GoString(it.system_prompt),
		}
		if it.model != nil {
			out[i].Model = C.GoString(it.model)
		}
		if it.use_reasoning >= 0 {
			v := it.use_reasoning == 1
			out[i].UseReasoning = &v
		}
	}
	return out, nil
}

// Entropy is the Shannon entropy of a distribution, in bits.
func Entropy(probabilities []float64) float64 {
	if len(probabilities) == 0 {
		return 0
	}
	return float64(C.mcpc_entropy((*C.double)(unsafe.Pointer(&probabilities[0])), C.size_t(len(probabilities))))
}

// Decide runs the entropy-based reasoning decision on a caller's distribution. flags maps a
// category name to whether it wants reasoning; absent names are unknown to the decision.
func Decide(probabilities []float64, names []string, flags map[string]bool, threshold float64) (Decision, error) {
	if len(probabilities) != len(names) {
		return Decision{}, &Error{Code: ErrInvalidArgument.Code, Status: ErrInvalidArgument.Status,
			Message: fmt.Sprintf("%d probabilities but %d names", len(probabilities), len(names))}
	}
	n := len(names)
	var d *C.mcpc_decision
	var cerr *C.mcpc_error
	if n == 0 {
		if err := toError(C.mcpc_reasoning_decide(nil, nil, nil, 0, C.double(threshold), &d, &cerr), cerr); err != nil {
			return Decision{}, err
		}
		defer C.mcpc_decision_free(d)
		return copyDecision(d), nil
	}
	cnames := make([]*C.char, n)
	cflags := make([]C.int, n)
	for i, name := range names {
		cnames[i] = C.CString(name)
		defer C.free(unsafe.Pointer(cnames[i]))
		cflags[i] = C.MCPC_REASONING_UNKNOWN
		if v, ok := flags[name]; ok {
			cflags[i] = 0
			if v {
				cflags[i] = 1
			}
		}
	}
	status := C.mcpc_reasoning_decide((*C.double)(unsafe.Pointer(&probabilities[0])), &cnames[0], &cflags[0],
		C.size_t(n), C.double(threshold), &d, &cerr)
	if err := toError(status, cerr); err != nil {
		return Decision{}, err
	}
	defer C.mcpc_decision_free(d)
	return copyDecision(d), nil
}
