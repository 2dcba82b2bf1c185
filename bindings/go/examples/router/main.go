// router: an OpenAI-compatible routing proxy in Go, the in-process twin of `mcpclass route`
// (docs/route.md). POST /v1/chat/completions is evaluated by the library (mcpclass.Router, the
// code `mcpclass route` runs: signals, decision, guards, the body for the chosen model and its
// fallbacks, the headers), and forwarded by a net/http/httputil.ReverseProxy to that model's
// upstream; answers stream back as they arrive. The example owns only the HTTP side: serving,
// upstream connections, fallback on connect failures, the answer's headers.
//
//	go run ./examples/router --config router.json --http 127.0.0.1:8080
//
// The configuration is the file `mcpclass route` reads; the library reads it whole. Go's
// standard library has no YAML parser, so the upstreams (route.models' base_url, api_key,
// timeouts) come from a JSON file, or, for a YAML file, from the route section given as JSON
// with --route FILE.
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

// ModelConfig is what the proxy needs of one entry of route.models to reach its upstream; the
// library reads the rest (reasoning family, fallback, ...) for the evaluation.
type ModelConfig struct {
	BaseURL        string   `json:"base_url"`
	APIKey         string   `json:"api_key"`
	UpstreamModel  string   `json:"upstream_model"`
	ConnectTimeout *float64 `json:"connect_timeout"`
	Timeout        *float64 `json:"timeout"`
	CAFile         string   `json:"ca_file"`
}

// RouteConfig is the part of the route section the proxy reads.
type RouteConfig struct {
	RoutedModels []string                `json:"routed_models"`
	Models       map[string]*ModelConfig `json:"models"`
}

const defaultMaxBody = 4 << 20 // server.http.max_body_bytes' default

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func expandEnv(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string { return os.Getenv(m[2 : len(m)-1]) })
}

// LoadConfig opens the router of the configuration file (the library reads and checks every
// section) and reads the upstreams from its route section, or from routePath when set.
func LoadConfig(path, routePath string) (*RouteConfig, *mcpclass.Router, int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	var doc map[string]json.RawMessage
	isJSON := json.Unmarshal(data, &doc) == nil && doc != nil
	rc := &RouteConfig{}
	maxBody := int64(defaultMaxBody)
	if isJSON {
		if err := json.Unmarshal(doc["route"], rc); doc["route"] != nil && err != nil {
			return nil, nil, 0, fmt.Errorf("route: %w", err)
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
		if err := json.Unmarshal(raw, rc); err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", routePath, err)
		}
	}
	router, err := mcpclass.OpenRouterFile(path, nil)
	if err != nil {
		return nil, nil, 0, err
	}
	return rc, router, maxBody, nil
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
	router    *mcpclass.Router
	maxBody   int64
	upstreams map[string]*upstream
	proxy     *httputil.ReverseProxy
}

// NewRouter prepares a connection pool per upstream of the route section.
func NewRouter(rc *RouteConfig, router *mcpclass.Router, maxBody int64) (*Router, error) {
	if rc.RoutedModels == nil {
		rc.RoutedModels = []string{"auto"}
	}
	rt := &Router{cfg: rc, router: router, maxBody: maxBody, upstreams: map[string]*upstream{}}
	for name, m := range rc.Models {
		if m == nil || m.BaseURL == "" {
			return nil, fmt.Errorf("route.models.%s.base_url: required", name)
		}
		up, err := newUpstream(name, m)
		if err != nil {
			return nil, fmt.Errorf("route.models.%s: %w", name, err)
		}
		rt.upstreams[name] = up
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
	chain   []string          // the chosen model, then its fallbacks
	bodies  [][]byte          // the body for each model of the chain
	headers map[string]string // the evaluation's headers for the client
	eval    *mcpclass.RouteEvaluation
	served  string // the model that answered, or was tried last
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

// chat evaluates the request with the library (the decision and the bodies to forward, exactly
// as `mcpclass route` does) and forwards it, or answers the rejection or block.
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
	ev, err := rt.router.Evaluate(raw)
	if err != nil {
		if errors.Is(err, mcpclass.ErrInvalidText) {
			writeError(w, http.StatusBadRequest, "invalid_request", "the body must be a JSON object")
		} else {
			writeError(w, http.StatusInternalServerError, "classification_failed", err.Error())
		}
		return
	}
	ex := &exchange{eval: ev}
	switch ev.Action {
	case "reject", "block":
		for k, v := range ev.Headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ev.Status)
		w.Write(ev.Error)
		return
	case "passthrough":
		// The client's bytes, to that model only, with its upstream name when it has one.
		if up := rt.cfg.Models[ev.Model]; up != nil && up.UpstreamModel != "" && up.UpstreamModel != ev.Model {
			raw = replaceModel(raw, up.UpstreamModel)
		}
		ex.chain, ex.bodies = []string{ev.Model}, [][]byte{raw}
	default:
		ex.chain, ex.bodies, ex.headers = []string{ev.Model}, [][]byte{ev.Body}, ev.Headers
		for _, f := range ev.Fallbacks {
			ex.chain, ex.bodies = append(ex.chain, f.Model), append(ex.bodies, f.Body)
		}
	}
	for _, key := range ex.chain {
		if rt.upstreams[key] == nil {
			writeError(w, http.StatusInternalServerError, "no_upstream", fmt.Sprintf("no upstream for model %q (route.models)", key))
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(raw)) // replaced per model by the transport
	rt.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
}

// replaceModel is the body with the value of its top-level "model" member replaced, every
// other byte as the client sent it (what `mcpclass route` forwards on a passthrough).
func replaceModel(raw []byte, model string) []byte {
	value, _ := json.Marshal(model)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw
	}
	var out []byte
	copied := 0
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return raw
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw
		}
		if key == "model" {
			end := int(dec.InputOffset())
			start := end - len(v)
			out = append(append(out, raw[copied:start]...), value...)
			copied = end
		}
	}
	return append(out, raw[copied:]...)
}

// fallbackTransport sends the request to the first model of the chain it can connect to.
type fallbackTransport struct{ rt *Router }

func (t fallbackTransport) RoundTrip(out *http.Request) (*http.Response, error) {
	ex := out.Context().Value(exchangeKey{}).(*exchange)
	var err error
	for i, key := range ex.chain {
		ex.served = key
		up := t.rt.upstreams[key]
		body := ex.bodies[i]
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
		// The decision's header_mutation: deletes first, then adds and updates replace.
		for _, name := range ex.eval.UpstreamHeadersRemoved {
			req.Header.Del(name)
		}
		for name, value := range ex.eval.UpstreamHeaders {
			req.Header.Set(name, value)
		}
		var resp *http.Response
		resp, err = up.transport.RoundTrip(req)
		if err == nil {
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
	for k, v := range ex.headers {
		resp.Header.Set(k, v)
	}
	resp.Header.Set("x-mcpclass-model", ex.served)
	return nil
}

func (rt *Router) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(r.Context().Err(), context.Canceled) {
		return // the client went away
	}
	// The answer says what was decided and which upstream failed, as `mcpclass route`'s does.
	ex := r.Context().Value(exchangeKey{}).(*exchange)
	for k, v := range ex.headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("x-mcpclass-model", ex.served)
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

func main() {
	config := flag.String("config", "", "the configuration file `mcpclass route` reads (JSON; YAML with --route)")
	route := flag.String("route", "", "the route section as a JSON file (for a YAML --config)")
	addr := flag.String("http", "127.0.0.1:8080", "listen address")
	flag.Parse()
	if *config == "" {
		log.Fatal("--config is required")
	}
	rc, router, maxBody, err := LoadConfig(*config, *route)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := NewRouter(rc, router, maxBody)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("routing on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, rt))
}
