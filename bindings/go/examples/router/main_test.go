package main

// The router against tests/route/fake_upstream.py, run as a subprocess (skipped without
// python3): model rewrite and reasoning fields per family, passthrough, errors, streaming and
// fallback, over real sockets.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type fake struct {
	url string // .../v1
	cmd *exec.Cmd
}

func startFake(t *testing.T) *fake {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("python3 not found: the fake upstream cannot run")
		}
	}
	script, _ := filepath.Abs("../../../../tests/route/fake_upstream.py")
	cmd := exec.Command(python, script)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("fake upstream: %v", err)
	}
	return &fake{url: "http://127.0.0.1:" + strings.TrimSpace(port) + "/v1", cmd: cmd}
}

type record struct {
	Path         string            `json:"path"`
	Headers      map[string]string `json:"headers"`
	Body         map[string]any    `json:"body"`
	Raw          string            `json:"raw"`
	Done         bool              `json:"done"`
	Disconnected bool              `json:"disconnected"`
}

func (f *fake) records(t *testing.T) []record {
	resp, err := http.Get(strings.TrimSuffix(f.url, "/v1") + "/_records")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func (f *fake) last(t *testing.T) record {
	recs := f.records(t)
	if len(recs) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return recs[len(recs)-1]
}

// closedPort is a local address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func testConfig(upstream, dead string) string {
	return fmt.Sprintf(`{
  "categories": [
    {"name": "math", "description": "Math", "system_prompt": "You are a math expert.", "model": "m-openai", "use_reasoning": true},
    {"name": "code", "description": "Code", "system_prompt": "You write code.", "model": "m-vllm", "use_reasoning": false},
    {"name": "history", "description": "History", "system_prompt": "You are a historian.", "model": "m-deepseek", "use_reasoning": true},
    {"name": "law", "description": "Law", "system_prompt": "You are a lawyer.", "model": "m-dead", "use_reasoning": false},
    {"name": "general", "description": "Everything else", "system_prompt": "", "model": "m-none", "use_reasoning": false}
  ],
  "classifier": {"kind": "rules", "fallback": "general", "rules": {
    "math": {"keywords": ["algebra", "derivative"]},
    "code": {"keywords": ["python", "compiler"]},
    "history": {"keywords": ["empire", "battle"]},
    "law": {"keywords": ["contract", "lawsuit"]}}},
  "routing": {
    "default_model": "m-none",
    "signals": {"keywords": [{"name": "urgent", "operator": "OR", "keywords": ["urgent"]}], "pii": [{"name": "contact"}]},
    "decisions": [
      {"name": "contact_block", "priority": 200, "rules": {"type": "pii", "name": "contact"}, "modelRefs": [{"model": "m-none"}],
       "plugins": [{"type": "pii", "configuration": {"action": "block"}}]},
      {"name": "urgent", "priority": 100, "rules": {"type": "keyword", "name": "urgent"}, "modelRefs": [{"model": "m-dead", "use_reasoning": true}],
       "plugins": [{"type": "system_prompt", "configuration": {"system_prompt": "Answer fast.", "mode": "replace"}},
                   {"type": "header_mutation", "configuration": {"add": [{"name": "X-Route-Tier", "value": "urgent"}], "delete": ["X-Client-Secret"]}}]}
    ]
  },
  "route": {
    "system_prompt": "insert",
    "models": {
      "m-openai": {"base_url": "%[1]s", "upstream_model": "gpt-up", "reasoning": "openai", "api_key": "${ROUTER_TEST_KEY}"},
      "m-vllm": {"base_url": "%[1]s", "upstream_model": "qwen-up", "reasoning": "vllm"},
      "m-deepseek": {"base_url": "%[1]s/", "reasoning": "deepseek"},
      "m-none": {"base_url": "%[1]s"},
      "m-dead": {"base_url": "http://%[2]s/v1", "connect_timeout": 1, "fallback": "m-vllm", "reasoning": "openai"}
    }
  }
}`, upstream, dead)
}

func startRouter(t *testing.T) (*httptest.Server, *fake) {
	f := startFake(t)
	t.Setenv("ROUTER_TEST_KEY", "sekret")
	path := filepath.Join(t.TempDir(), "router.json")
	if err := os.WriteFile(path, []byte(testConfig(f.url, closedPort(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, router, maxBody, err := LoadConfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Close() })
	rt, err := NewRouter(rc, router, maxBody)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rt)
	t.Cleanup(srv.Close)
	return srv, f
}

func post(t *testing.T, srv *httptest.Server, body string, header ...string) (*http.Response, []byte) {
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

func userRequest(text string) string {
	b, _ := json.Marshal(map[string]any{"model": "auto", "temperature": 0.25,
		"messages": []any{map[string]any{"role": "user", "content": text}}})
	return string(b)
}

func TestRoutedPerFamily(t *testing.T) {
	srv, f := startRouter(t)

	// openai family: reasoning_effort, the upstream's name, the configured key (never the client's).
	resp, data := post(t, srv, userRequest("What is the derivative of x^3?"), "Authorization", "Bearer client")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
	h := resp.Header
	if h.Get("x-mcpclass-category") != "math" || h.Get("x-mcpclass-model") != "m-openai" ||
		h.Get("x-mcpclass-reasoning") != "true" || len(h.Get("x-mcpclass-confidence")) != len("0.000000") {
		t.Fatalf("headers %v", h)
	}
	rec := f.last(t)
	b := rec.Body
	if rec.Path != "/v1/chat/completions" || b["model"] != "gpt-up" || b["reasoning_effort"] != "high" ||
		b["temperature"] != 0.25 || rec.Headers["authorization"] != "Bearer sekret" {
		t.Fatalf("upstream got %+v", rec)
	}
	msgs := b["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "You are a math expert." {
		t.Fatalf("system prompt not inserted: %v", msgs)
	}

	// vllm: enable_thinking, the client's other template keys kept; no Authorization at all.
	resp, _ = post(t, srv, `{"model":"auto","chat_template_kwargs":{"foo":1,"enable_thinking":true},
		"messages":[{"role":"system","content":"mine"},{"role":"user","content":[{"type":"text","text":"a python"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"compiler"}]}]}`,
		"Authorization", "Bearer client")
	rec = f.last(t)
	kw, _ := rec.Body["chat_template_kwargs"].(map[string]any)
	if resp.Header.Get("x-mcpclass-category") != "code" || rec.Body["model"] != "qwen-up" ||
		kw["enable_thinking"] != false || kw["foo"] != 1.0 || rec.Headers["authorization"] != "" {
		t.Fatalf("vllm: %v %+v", resp.Header, rec)
	}
	if msgs := rec.Body["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "mine" {
		t.Fatalf("insert must keep the client's system message: %v", msgs)
	}

	// deepseek: thinking; the model's key is the upstream name by default. last_user: only the
	// last user message counts.
	post(t, srv, `{"model":"auto","messages":[{"role":"user","content":"python"},{"role":"assistant","content":"?"},{"role":"user","content":"the battle of Hastings"}]}`)
	rec = f.last(t)
	kw, _ = rec.Body["chat_template_kwargs"].(map[string]any)
	if rec.Body["model"] != "m-deepseek" || kw["thinking"] != true || rec.Body["reasoning_effort"] != nil {
		t.Fatalf("deepseek: %+v", rec)
	}

	// none: no reasoning field; an empty category prompt inserts nothing.
	resp, _ = post(t, srv, userRequest("tell me a joke"))
	rec = f.last(t)
	if resp.Header.Get("x-mcpclass-reasoning") != "false" || rec.Body["model"] != "m-none" ||
		rec.Body["reasoning_effort"] != nil || rec.Body["chat_template_kwargs"] != nil || len(rec.Body["messages"].([]any)) != 1 {
		t.Fatalf("none: %v %+v", resp.Header, rec)
	}
}

func TestPassthroughAndErrors(t *testing.T) {
	srv, f := startRouter(t)
	// The client's bytes; the model's upstream name replaces the model's, nothing else changes.
	body := `{"model": "m-vllm",  "messages": [{"role":"user","content":"derivative"}], "x": 1.50}`
	resp, _ := post(t, srv, body)
	rec := f.last(t)
	if want := strings.Replace(body, `"m-vllm"`, `"qwen-up"`, 1); resp.StatusCode != 200 || rec.Raw != want ||
		resp.Header.Get("x-mcpclass-model") != "m-vllm" || resp.Header.Get("x-mcpclass-category") != "" {
		t.Fatalf("passthrough: %d %v %q", resp.StatusCode, resp.Header, rec.Raw)
	}
	body = `{"messages": [], "model" : "m-none" ,"x":[1, 2]}`
	if resp, _ := post(t, srv, body); resp.StatusCode != 200 || f.last(t).Raw != body {
		t.Fatalf("passthrough without upstream_model: %d %q", resp.StatusCode, f.last(t).Raw)
	}
	n := len(f.records(t))
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"model":"gpt-9","messages":[]}`, 404, "model_not_found"},
		{`{"model":"auto","messages":`, 400, "invalid_request"},
		{`[1,2]`, 400, "invalid_request"},
		{`{"model":"auto"}`, 400, "invalid_request"},
		{`{"model":"auto","messages":{"role":"user"}}`, 400, "invalid_request"},
	} {
		resp, data := post(t, srv, c.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(data, &e)
		if resp.StatusCode != c.status || e.Error.Code != c.code {
			t.Errorf("%s: %d %s", c.body, resp.StatusCode, data)
		}
	}
	if len(f.records(t)) != n {
		t.Fatal("a refused request reached the upstream")
	}
	// An upstream error passes through with its status and body.
	resp, data := post(t, srv, `{"model":"auto","fake":{"status":503,"error":"busy"},"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 503 || !bytes.Contains(data, []byte("busy")) {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
	// An upstream that closes the connection without answering: 502.
	resp, data = post(t, srv, `{"model":"auto","fake":{"close":true},"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 502 || !bytes.Contains(data, []byte(`"upstream_unavailable"`)) ||
		resp.Header.Get("x-mcpclass-model") != "m-none" || resp.Header.Get("x-mcpclass-category") != "general" {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
}

func TestFallback(t *testing.T) {
	srv, f := startRouter(t)
	// law -> m-dead (nothing listens) -> m-vllm, rewritten for vllm.
	resp, _ := post(t, srv, userRequest("Is this contract valid?"))
	rec := f.last(t)
	kw, _ := rec.Body["chat_template_kwargs"].(map[string]any)
	if resp.StatusCode != 200 || resp.Header.Get("x-mcpclass-model") != "m-vllm" || rec.Body["model"] != "qwen-up" ||
		kw["enable_thinking"] != false || rec.Body["reasoning_effort"] != nil {
		t.Fatalf("fallback: %d %v %+v", resp.StatusCode, resp.Header, rec)
	}
}

func TestStreaming(t *testing.T) {
	srv, f := startRouter(t)
	body := `{"model":"auto","stream":true,"fake":{"chunks":3,"delay":0.5},"messages":[{"role":"user","content":"algebra"}]}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("x-mcpclass-category") != "math" {
		t.Fatalf("%v", resp.Header)
	}
	start := time.Now()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") || !strings.Contains(line, "part0") {
		t.Fatalf("first line %q %v", line, err)
	}
	// The first chunk arrived while the upstream was still answering (it needs 1.5 s more).
	if rec := f.last(t); rec.Done || time.Since(start) > time.Second {
		t.Fatalf("the answer was buffered: %+v after %v", rec, time.Since(start))
	}
	rest, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(rest, []byte("part2")) || !bytes.HasSuffix(rest, []byte("data: [DONE]\n\n")) {
		t.Fatalf("rest %q", rest)
	}
}

// A decision of the routing section: its model (unreachable, so its fallback), system prompt and
// header mutation reach the upstream, the x-vsr-* headers the client; a PII block is answered by
// the router and never forwarded.
func TestDecisionsBlockAndHeaderMutation(t *testing.T) {
	srv, f := startRouter(t)
	resp, data := post(t, srv, userRequest("urgent: is the server down?"), "X-Client-Secret", "s")
	rec := f.last(t)
	kw, _ := rec.Body["chat_template_kwargs"].(map[string]any)
	msgs, _ := rec.Body["messages"].([]any)
	if resp.StatusCode != 200 || resp.Header.Get("x-vsr-selected-decision") != "urgent" ||
		resp.Header.Get("x-vsr-matched-keywords") != "urgent" || resp.Header.Get("x-mcpclass-model") != "m-vllm" ||
		rec.Body["model"] != "qwen-up" || kw["enable_thinking"] != true || len(msgs) != 2 ||
		msgs[0].(map[string]any)["content"] != "Answer fast." {
		t.Fatalf("decision: %d %s %v %+v", resp.StatusCode, data, resp.Header, rec)
	}
	if rec.Headers["x-route-tier"] != "urgent" || rec.Headers["x-client-secret"] != "" {
		t.Fatalf("header mutation: %v", rec.Headers)
	}
	n := len(f.records(t))
	resp, data = post(t, srv, userRequest("urgent: mail jane.doe@example.com the report"))
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(data, &e)
	if resp.StatusCode != 400 || e.Error.Code != "pii_detected" || resp.Header.Get("x-vsr-selected-decision") != "contact_block" ||
		resp.Header.Get("x-vsr-response-path") != "blocked" || len(f.records(t)) != n {
		t.Fatalf("block: %d %s %v", resp.StatusCode, data, resp.Header)
	}
}
