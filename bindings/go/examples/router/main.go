// router: an OpenAI-compatible routing proxy in Go, the in-process twin of `mcpclass route`
// (docs/route.md). POST /v1/chat/completions is classified with the mcpclass binding, rewritten
// for the chosen model (model name, reasoning fields, optional system prompt) and forwarded by a
// net/http/httputil.ReverseProxy to that model's upstream; answers stream back as they arrive.
//
//	go run ./examples/router --config router.json --http 127.0.0.1:8080
//
// The configuration is the file `mcpclass route` reads. Go's standard library has no YAML
// parser, so: a JSON file (JSON is YAML too) gives both the `route` section and the classifier;
// with a YAML file the classifier is loaded from it and the `route` section comes as JSON from
// --route FILE.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mcpclass/mcpclass/bindings/go"
)

// ModelConfig is one entry of route.models.
type ModelConfig struct {
	BaseURL            string   `json:"base_url"`
	APIKey             string   `json:"api_key"`
	UpstreamModel      string   `json:"upstream_model"`
	Reasoning          string   `json:"reasoning"`
	ReasoningEffort    string   `json:"reasoning_effort"`
	ReasoningEffortOff string   `json:"reasoning_effort_off"`
	ConnectTimeout     *float64 `json:"connect_timeout"`
	Timeout            *float64 `json:"timeout"`
	Fallback           string   `json:"fallback"`
	CAFile             string   `json:"ca_file"`
}

// RouteConfig is the route section.
type RouteConfig struct {
	Text         string                  `json:"text"`
	RoutedModels []string                `json:"routed_models"`
	SystemPrompt string                  `json:"system_prompt"`
	Models       map[string]*ModelConfig `json:"models"`
}

const defaultMaxBody = 4 << 20 // server.http.max_body_bytes' default

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func expandEnv(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string { return os.Getenv(m[2 : len(m)-1]) })
}

// LoadConfig reads the configuration file (and the route section from routePath when set) and
// opens the classifier it describes.
func LoadConfig(path, routePath string) (*RouteConfig, *mcpclass.Classifier, int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	var doc map[string]json.RawMessage
	isJSON := json.Unmarshal(data, &doc) == nil && doc != nil
	rc := &RouteConfig{}
	maxBody := int64(defaultMaxBody)
	if isJSON {
		if raw, ok := doc["route"]; ok {
			if err := strictUnmarshal(raw, rc); err != nil {
				return nil, nil, 0, fmt.Errorf("route: %w", err)
			}
		}
		var server struct {
			HTTP struct {
				MaxBodyBytes int64 `json:"max_body_bytes"`
			} `json:"http"`
		}
		if json.Unmarshal(doc["server"], &server) == nil && server.HTTP.MaxBodyBytes > 0 {
			maxBody = server.HTTP.MaxBodyBytes
		}
	} else if routePath == "" {
		return nil, nil, 0, fmt.Errorf("%s is not JSON: give the route section as JSON with --route", path)
	}
	if routePath != "" {
		raw, err := os.ReadFile(routePath)
		if err != nil {
			return nil, nil, 0, err
		}
		rc = &RouteConfig{}
		if err := strictUnmarshal(raw, rc); err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", routePath, err)
		}
	}
	// The file first (its relative paths resolve against its directory); a library that does
	// not know the route section rejects it, then the document without it is loaded instead.
	cls, err := mcpclass.OpenFile(path)
	if err != nil && isJSON && doc["route"] != nil {
		delete(doc, "route")
		rest, _ := json.Marshal(doc)
		cls, err = mcpclass.Open(string(rest))
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return rc, cls, maxBody, nil
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

type upstream struct {
	name      string
	cfg       *ModelConfig
	url       *url.URL // <base_url>/chat/completions
	transport *http.Transport
	timeout   time.Duration // 0: none
}

// Router is the proxy: an http.Handler.
type Router struct {
	cfg       *RouteConfig
	cls       *mcpclass.Classifier
	prompts   []string // category system prompts, by class index
	maxBody   int64
	upstreams map[string]*upstream
	proxy     *httputil.ReverseProxy
}

// NewRouter validates the route section (filling in its defaults) against the classifier.
func NewRouter(rc *RouteConfig, cls *mcpclass.Classifier, maxBody int64) (*Router, error) {
	if rc.Text == "" {
		rc.Text = "last_user"
	}
	if rc.SystemPrompt == "" {
		rc.SystemPrompt = "none"
	}
	if rc.RoutedModels == nil {
		rc.RoutedModels = []string{"auto"}
	}
	if rc.Text != "last_user" && rc.Text != "all_user" {
		return nil, fmt.Errorf("route.text: %q is not last_user or all_user", rc.Text)
	}
	if rc.SystemPrompt != "none" && rc.SystemPrompt != "insert" && rc.SystemPrompt != "replace" {
		return nil, fmt.Errorf("route.system_prompt: %q is not none, insert or replace", rc.SystemPrompt)
	}
	rt := &Router{cfg: rc, cls: cls, maxBody: maxBody, upstreams: map[string]*upstream{}}
	for name, m := range rc.Models {
		if m == nil || m.BaseURL == "" {
			return nil, fmt.Errorf("route.models.%s.base_url: required", name)
		}
		switch m.Reasoning {
		case "":
			m.Reasoning = "none"
		case "openai", "vllm", "deepseek", "none":
		default:
			return nil, fmt.Errorf("route.models.%s.reasoning: %q is not openai, vllm, deepseek or none", name, m.Reasoning)
		}
		if m.Fallback != "" && rc.Models[m.Fallback] == nil {
			return nil, fmt.Errorf("route.models.%s.fallback: %q is not a configured model", name, m.Fallback)
		}
		up, err := newUpstream(name, m)
		if err != nil {
			return nil, fmt.Errorf("route.models.%s: %w", name, err)
		}
		rt.upstreams[name] = up
	}
	cats, err := cls.Categories()
	if err != nil {
		return nil, err
	}
	for _, c := range cats {
		if c.Model != "" && rc.Models[c.Model] == nil {
			return nil, fmt.Errorf("category %s: model %q has no entry under route.models", c.Name, c.Model)
		}
		rt.prompts = append(rt.prompts, c.SystemPrompt)
	}
	rt.proxy = &httputil.ReverseProxy{
		Director:       func(*http.Request) {}, // the transport picks the upstream
		Transport:      fallbackTransport{rt},
		FlushInterval:  -1, // every write reaches the client at once: SSE streams through
		ModifyResponse: rt.addHeaders,
		ErrorHandler:   rt.upstreamError,
	}
	return rt, nil
}

func newUpstream(name string, m *ModelConfig) (*upstream, error) {
	m.BaseURL, m.APIKey = expandEnv(m.BaseURL), expandEnv(m.APIKey)
	if m.UpstreamModel == "" {
		m.UpstreamModel = name
	}
	if m.ReasoningEffort == "" {
		m.ReasoningEffort = "high"
	}
	if m.ReasoningEffortOff == "" {
		m.ReasoningEffortOff = "low"
	}
	u, err := url.Parse(strings.TrimRight(m.BaseURL, "/") + "/chat/completions")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http(s) URL", m.BaseURL)
	}
	seconds := func(v *float64, def float64) time.Duration {
		if v != nil {
			def = *v
		}
		return time.Duration(def * float64(time.Second))
	}
	connect := seconds(m.ConnectTimeout, 5)
	tr := &http.Transport{ // one keep-alive pool per model
		DialContext:         (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: connect,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	if m.CAFile != "" {
		pem, err := os.ReadFile(m.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificates", m.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &upstream{name: name, cfg: m, url: u, transport: tr, timeout: seconds(m.Timeout, 600)}, nil
}

// exchange is one request's routing state, carried to the transport in the request context.
type exchange struct {
	routed   bool
	chain    []string                // the chosen model, then its fallbacks
	body     func(key string) []byte // the body for a model of the chain
	served   string                  // the model that answered
	category string
	conf     float64
	reason   bool
}

type exchangeKey struct{}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		rt.chat(w, r)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		rt.models(w)
	case r.URL.Path == "/health":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	default:
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
	}
}

func (rt *Router) models(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int    `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	names := append([]string{}, rt.cfg.RoutedModels...)
	var configured []string
	for name := range rt.cfg.Models {
		configured = append(configured, name)
	}
	sort.Strings(configured)
	list := []model{}
	for _, n := range append(names, configured...) {
		list = append(list, model{n, "model", 0, "mcpclass"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": list})
}

func (rt *Router) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rt.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "the body is larger than max_body_bytes")
		} else {
			writeError(w, http.StatusBadRequest, "invalid_request", "reading the body: "+err.Error())
		}
		return
	}
	var req map[string]json.RawMessage
	var messages []json.RawMessage
	if json.Unmarshal(raw, &req) != nil || req == nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be a JSON object")
		return
	}
	if m := bytes.TrimSpace(req["messages"]); len(m) == 0 || m[0] != '[' || json.Unmarshal(m, &messages) != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "messages must be an array")
		return
	}
	var model string
	json.Unmarshal(req["model"], &model) // not a string: no such model
	ex := &exchange{}
	switch {
	case contains(rt.cfg.RoutedModels, model):
		if !rt.decide(w, req, messages, ex) {
			return
		}
	case rt.cfg.Models[model] != nil:
		// Passthrough: the client's bytes, to that model only.
		ex.chain = []string{model}
		ex.body = func(string) []byte { return raw }
	default:
		writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("the model %q does not exist", model))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw)) // replaced per model by the transport
	rt.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
}

// decide classifies the request's text and prepares the rewritten body for each model of the
// chain; false when it answered an error.
func (rt *Router) decide(w http.ResponseWriter, req map[string]json.RawMessage, messages []json.RawMessage, ex *exchange) bool {
	var texts []string
	for _, m := range messages {
		var msg struct {
			Role    any             `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &msg) != nil || msg.Role != "user" {
			continue
		}
		texts = append(texts, contentText(msg.Content))
	}
	text := ""
	if len(texts) > 0 {
		if rt.cfg.Text == "all_user" {
			text = strings.Join(texts, "\n")
		} else {
			text = texts[len(texts)-1]
		}
	}
	res, err := rt.cls.Classify(text)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "classification_failed", err.Error())
		return false
	}
	if rt.cfg.Models[res.Model] == nil {
		writeError(w, http.StatusInternalServerError, "classification_failed",
			fmt.Sprintf("the chosen model %q has no entry under route.models", res.Model))
		return false
	}
	ex.routed, ex.category, ex.conf, ex.reason = true, res.Category, res.Confidence, res.UseReasoning
	for key, seen := res.Model, map[string]bool{}; key != "" && !seen[key]; key = rt.cfg.Models[key].Fallback {
		seen[key] = true
		ex.chain = append(ex.chain, key)
	}
	msgs := rt.withSystemPrompt(messages, res.Class)
	ex.body = func(key string) []byte { return rt.rewrite(req, msgs, key, res.UseReasoning) }
	return true
}

// contentText is a message content's text: a string, or the text parts of an array joined by
// newlines.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		var part struct {
			Type any `json:"type"`
			Text any `json:"text"`
		}
		if json.Unmarshal(p, &part) == nil && part.Type == "text" {
			if t, ok := part.Text.(string); ok {
				texts = append(texts, t)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// withSystemPrompt applies route.system_prompt with the category's prompt.
func (rt *Router) withSystemPrompt(messages []json.RawMessage, class int) []json.RawMessage {
	prompt := ""
	if class >= 0 && class < len(rt.prompts) {
		prompt = rt.prompts[class]
	}
	if rt.cfg.SystemPrompt == "none" || prompt == "" {
		return messages
	}
	content, _ := json.Marshal(prompt)
	for i, m := range messages {
		var msg map[string]json.RawMessage
		var role string
		if json.Unmarshal(m, &msg) != nil || json.Unmarshal(msg["role"], &role) != nil || role != "system" {
			continue
		}
		if rt.cfg.SystemPrompt == "insert" {
			return messages // it already has a system message
		}
		msg["content"] = content
		out := append([]json.RawMessage{}, messages...)
		out[i], _ = json.Marshal(msg)
		return out
	}
	system, _ := json.Marshal(map[string]string{"role": "system", "content": prompt})
	return append([]json.RawMessage{system}, messages...)
}

// rewrite is the body sent to model key: its upstream name and its family's reasoning fields;
// every other field of the client's request is kept as sent.
func (rt *Router) rewrite(req map[string]json.RawMessage, messages []json.RawMessage, key string, reasoning bool) []byte {
	m := rt.cfg.Models[key]
	out := make(map[string]json.RawMessage, len(req)+1)
	for k, v := range req {
		out[k] = v
	}
	out["model"], _ = json.Marshal(m.UpstreamModel)
	out["messages"], _ = json.Marshal(messages)
	kwarg := ""
	switch m.Reasoning {
	case "openai":
		effort := m.ReasoningEffortOff
		if reasoning {
			effort = m.ReasoningEffort
		}
		out["reasoning_effort"], _ = json.Marshal(effort)
	case "vllm":
		kwarg = "enable_thinking"
	case "deepseek":
		kwarg = "thinking"
	}
	if kwarg != "" {
		var kwargs map[string]json.RawMessage
		if json.Unmarshal(out["chat_template_kwargs"], &kwargs) != nil || kwargs == nil {
			kwargs = map[string]json.RawMessage{}
		}
		kwargs[kwarg], _ = json.Marshal(reasoning)
		out["chat_template_kwargs"], _ = json.Marshal(kwargs)
	}
	body, _ := json.Marshal(out)
	return body
}

// fallbackTransport sends the request to the first model of the chain it can connect to.
type fallbackTransport struct{ rt *Router }

func (t fallbackTransport) RoundTrip(out *http.Request) (*http.Response, error) {
	ex := out.Context().Value(exchangeKey{}).(*exchange)
	var err error
	for _, key := range ex.chain {
		up := t.rt.upstreams[key]
		body := ex.body(key)
		ctx, cancel := context.WithCancel(out.Context())
		if up.timeout > 0 {
			ctx, cancel = context.WithTimeout(out.Context(), up.timeout)
		}
		req := out.Clone(ctx)
		u := *up.url
		req.URL, req.Host = &u, u.Host
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Header.Del("Authorization") // the client's credentials are not the upstream's
		if up.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+up.cfg.APIKey)
		}
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
		var resp *http.Response
		resp, err = up.transport.RoundTrip(req)
		if err == nil {
			ex.served = key
			resp.Body = cancelOnClose{resp.Body, cancel} // the timeout covers the whole answer
			return resp, nil
		}
		cancel()
		if !connectFailed(err) {
			return nil, err
		}
	}
	return nil, err
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error { defer c.cancel(); return c.ReadCloser.Close() }

// connectFailed: resolving, connecting or the TLS handshake failed, so nothing was sent and
// another upstream may be tried.
func connectFailed(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	return (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dns) || errors.As(err, &unknownCA) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &record)
}

func (rt *Router) addHeaders(resp *http.Response) error {
	ex := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	h := resp.Header
	h.Set("x-mcpclass-model", ex.served)
	if ex.routed {
		h.Set("x-mcpclass-category", ex.category)
		h.Set("x-mcpclass-reasoning", fmt.Sprint(ex.reason))
		h.Set("x-mcpclass-confidence", fmt.Sprintf("%.6f", ex.conf))
	}
	return nil
}

func (rt *Router) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(r.Context().Err(), context.Canceled) {
		return // the client went away
	}
	var ne net.Error
	if !connectFailed(err) && (errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())) {
		writeError(w, http.StatusGatewayTimeout, "upstream_timeout", err.Error())
		return
	}
	writeError(w, http.StatusBadGateway, "upstream_unavailable", err.Error())
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	kind := "invalid_request_error"
	if status >= 500 {
		kind = "server_error"
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": kind, "param": nil, "code": code}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func main() {
	config := flag.String("config", "", "the configuration file `mcpclass route` reads (JSON; YAML with --route)")
	route := flag.String("route", "", "the route section as a JSON file (for a YAML --config)")
	addr := flag.String("http", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if *config == "" {
		log.Fatal("--config is required")
	}
	rc, cls, maxBody, err := LoadConfig(*config, *route)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := NewRouter(rc, cls, maxBody)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("routing on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, rt))
}
