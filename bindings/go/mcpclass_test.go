package mcpclass

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testConfig = `
categories:
  - name: math
    description: Math questions
    system_prompt: You are a math expert.
    model: math-model
    use_reasoning: true
  - name: general
    description: Everything else
    system_prompt: You are helpful.
classifier:
  kind: rules
  fallback: general
  rules:
    math:
      keywords: [algebra, derivative]
`

func mustOpen(t testing.TB, config string) *Classifier {
	t.Helper()
	c, err := Open(config)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestVersion(t *testing.T) {
	if v := Version(); v != "0.1.0" {
		t.Fatalf("Version() = %q", v)
	}
}

func TestClassify(t *testing.T) {
	c := mustOpen(t, "")
	r, err := c.Classify("What is the derivative of x squared?")
	if err != nil {
		t.Fatal(err)
	}
	if r.Category != "math" || r.Class != 0 || r.Model == "" {
		t.Fatalf("unexpected result %+v", r)
	}
	if len(r.Probabilities) != 5 {
		t.Fatalf("%d probabilities", len(r.Probabilities))
	}
	sum, max := 0.0, 0.0
	for _, p := range r.Probabilities {
		sum += p
		max = math.Max(max, p)
	}
	if math.Abs(sum-1) > 1e-9 || r.Confidence != max {
		t.Fatalf("sum %v, confidence %v, max %v", sum, r.Confidence, max)
	}
	if math.Abs(Entropy(r.Probabilities)-r.Entropy) > 1e-9 {
		t.Fatalf("entropy %v vs %v", Entropy(r.Probabilities), r.Entropy)
	}
	if r.Decision.Reason == "" || r.Decision.Strategy == "" || len(r.Decision.TopCategories) == 0 {
		t.Fatalf("decision %+v", r.Decision)
	}
	p := r.Provenance
	if p.Kind != "rules" || !strings.HasPrefix(p.ModelID, "fnv1a64:") || !strings.HasPrefix(p.TaxonomyID, "fnv1a64:") ||
		p.TokenizerID != "" || p.Generation != 1 || p.Cached || p.Fallback {
		t.Fatalf("provenance %+v", p)
	}
	if r.InScope != nil {
		t.Fatalf("keyword rules gave an out-of-scope score %v", *r.InScope)
	}
	// The same rules and categories opened again: the same ids.
	if again, err := mustOpen(t, "").Classify("What is the derivative of x squared?"); err != nil || again.Provenance != p {
		t.Fatalf("provenance %+v, then %+v (%v)", p, again.Provenance, err)
	}
}

func TestClassifyErrors(t *testing.T) {
	c := mustOpen(t, "")
	_, err := c.Classify("   ")
	var e *Error
	if !errors.Is(err, ErrInvalidText) || !errors.As(err, &e) || e.Status != "MCPC_ERR_INVALID_TEXT" ||
		!strings.Contains(e.Message, "empty") {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Classify("caf\xff"); !errors.Is(err, ErrInvalidText) {
		t.Fatalf("got %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Open("categories: 5\n")
	var e *Error
	if !errors.Is(err, ErrConfig) || !errors.As(err, &e) || e.Path != "categories" {
		t.Fatalf("got %#v", err)
	}
	if _, err := Open("classifier: {kind: bogus}\n"); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v", err)
	}
	if _, err := OpenFile("/nonexistent.yaml"); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v", err)
	}
}

func TestOpenFileAndCategories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(testConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cats, err := c.Categories()
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 2 || cats[0].Name != "math" || cats[0].Model != "math-model" ||
		cats[0].UseReasoning == nil || !*cats[0].UseReasoning || cats[1].UseReasoning != nil ||
		cats[1].SystemPrompt != "You are helpful." {
		t.Fatalf("categories %+v", cats)
	}
	r, err := c.Classify("Explain algebra")
	if err != nil || r.Model != "math-model" || !r.UseReasoning {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestClassifyJSON(t *testing.T) {
	c := mustOpen(t, "")
	out, err := c.ClassifyJSON("Solve 2x + 3 = 7", true, false)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Class         int       `json:"class"`
		Confidence    float64   `json:"confidence"`
		Model         string    `json:"model"`
		UseReasoning  *bool     `json:"use_reasoning"`
		Probabilities []float64 `json:"probabilities"`
	}
	if err := json.Unmarshal(out, &wire); err != nil || wire.UseReasoning == nil || len(wire.Probabilities) != 5 {
		t.Fatalf("%s: %v", out, err)
	}
	tool, err := c.ClassifyJSON("Solve 2x + 3 = 7", false, true)
	if err != nil || !strings.HasPrefix(string(tool), `{"content":[{"type":"text"`) {
		t.Fatalf("%s %v", tool, err)
	}
}

func TestClassifyBatch(t *testing.T) {
	c := mustOpen(t, "")
	rs, err := c.ClassifyBatch([]string{"What is 2+2?", "Who won the battle of Hastings in 1066?"})
	if err != nil || len(rs) != 2 || rs[0].Category != "math" || rs[1].Category != "history" {
		t.Fatalf("%+v %v", rs, err)
	}
	if rs, err := c.ClassifyBatch(nil); err != nil || len(rs) != 0 {
		t.Fatalf("%+v %v", rs, err)
	}
	_, err = c.ClassifyBatch([]string{"fine", ""})
	if !errors.Is(err, ErrInvalidText) || !strings.Contains(err.Error(), "texts[1]") {
		t.Fatalf("got %v", err)
	}
}

func TestDecide(t *testing.T) {
	d, err := Decide([]float64{0.98, 0.01, 0.01}, []string{"math", "science", "general"},
		map[string]bool{"math": true, "science": false}, 0.6)
	if err != nil || !d.UseReasoning || d.TopCategories[0].Name != "math" {
		t.Fatalf("%+v %v", d, err)
	}
	if d, err := Decide(nil, nil, nil, 0.6); err != nil || len(d.TopCategories) != 0 {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := Decide([]float64{1}, nil, nil, 0.6); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if _, err := Decide([]float64{1}, []string{"a"}, nil, math.NaN()); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if h := Entropy([]float64{0.5, 0.5}); math.Abs(h-1) > 1e-12 {
		t.Fatalf("entropy %v", h)
	}
}

func TestClose(t *testing.T) {
	c, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	if _, err := c.Classify("x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Categories(); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

// Many goroutines classify through one classifier at once (run with -race).
func TestConcurrentClassify(t *testing.T) {
	c := mustOpen(t, "")
	texts := map[string]string{
		"What is the integral of sin(x)?":         "math",
		"Who was the first emperor of Rome?":      "history",
		"How does photosynthesis work in plants?": "science",
		"How do I write a Python web server?":     "technology",
	}
	classifyConcurrently(t, c, texts, 16, 50)
}

// classifyConcurrently classifies every text `rounds` times from each of `goroutines`
// goroutines at once and fails the test for every unexpected category or error.
func classifyConcurrently(t *testing.T, c *Classifier, texts map[string]string, goroutines, rounds int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				for text, want := range texts {
					if r, err := c.Classify(text); err != nil || r.Category != want {
						errs <- fmt.Errorf("%q: %+v %v", text, r, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHostClassifier(t *testing.T) {
	base := atomic.LoadInt64(&liveCallbacks)
	var calls int64
	c, err := NewHostClassifier(testConfig, func(text string, p []float64) error {
		atomic.AddInt64(&calls, 1)
		switch {
		case strings.Contains(text, "fail"):
			return errors.New("model offline")
		case strings.Contains(text, "panic"):
			panic("boom")
		case strings.Contains(text, "zero"):
			p[0], p[1] = 3, 1
		default:
			p[1] = 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Classify("count to zero")
	if err != nil || r.Category != "math" || math.Abs(r.Confidence-0.75) > 1e-12 || r.Model != "math-model" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := c.Classify("please fail"); !errors.Is(err, ErrClassify) || !strings.Contains(err.Error(), "model offline") {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Classify("panic now"); !errors.Is(err, ErrClassify) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
	// Concurrent calls from many goroutines reach the Go function.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if r, err := c.Classify("zero"); err != nil || r.Class != 0 {
					t.Errorf("%+v %v", r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if atomic.LoadInt64(&calls) < 403 {
		t.Fatalf("%d calls", calls)
	}
	c.Close()
	if n := atomic.LoadInt64(&liveCallbacks); n != base {
		t.Fatalf("%d callback handles alive after Close, want %d", n, base)
	}
	if _, err := NewHostClassifier("", nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if _, err := NewHostClassifier("categories: 5", func(string, []float64) error { return nil }); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v", err)
	}
	if n := atomic.LoadInt64(&liveCallbacks); n != base {
		t.Fatalf("%d callback handles alive after failures, want %d", n, base)
	}
}

// The finalizer releases what Close was not called for.
func TestFinalizer(t *testing.T) {
	base := atomic.LoadInt64(&liveCallbacks)
	func() {
		for i := 0; i < 10; i++ {
			if _, err := NewHostClassifier("", func(string, []float64) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for atomic.LoadInt64(&liveCallbacks) != base && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := atomic.LoadInt64(&liveCallbacks); n != base {
		t.Fatalf("%d handles still alive", n-base)
	}
}

func TestServerTools(t *testing.T) {
	s, err := NewServer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	err = s.RegisterTool("weather", "Weather by city", schema, func(args json.RawMessage) (ToolResult, error) {
		var a struct{ City string }
		if err := json.Unmarshal(args, &a); err != nil {
			return ToolResult{}, err
		}
		if a.City == "Atlantis" {
			return ToolResult{}, errors.New("no such city")
		}
		if a.City == "Panic" {
			panic("bad city")
		}
		return ToolResult{Structured: map[string]any{"city": a.City, "celsius": 21}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterTool("plain", "", "", func(json.RawMessage) (ToolResult, error) {
		return ToolResult{Text: "hello"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	call := func(req string) string {
		t.Helper()
		out, err := s.Call([]byte(req))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	toolCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":%q}}}`
	if out := call(fmt.Sprintf(toolCall, "Paris")); !strings.Contains(out, `"structuredContent":{"celsius":21,"city":"Paris"}`) {
		t.Fatal(out)
	}
	if out := call(fmt.Sprintf(toolCall, "Atlantis")); !strings.Contains(out, `"text":"no such city"`) || !strings.Contains(out, `"isError":true`) {
		t.Fatal(out)
	}
	if out := call(fmt.Sprintf(toolCall, "Panic")); !strings.Contains(out, "panicked: bad city") {
		t.Fatal(out)
	}
	if out := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain"}}`); !strings.Contains(out, `"text":"hello"`) {
		t.Fatal(out)
	}
	if out := call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"classify_text","arguments":{"text":"What is 2+2?"}}}`); !strings.Contains(out, `\"class\":0`) {
		t.Fatal(out)
	}
	if out, err := s.Call([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); out != nil || err != nil {
		t.Fatalf("%s %v", out, err)
	}
	// Concurrent tool calls from many goroutines.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				city := fmt.Sprintf("city-%d-%d", g, i)
				out, err := s.Call([]byte(fmt.Sprintf(toolCall, city)))
				if err != nil || !strings.Contains(string(out), city) {
					t.Errorf("%s %v", out, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if err := s.RegisterTool("bad", "", `{"type":`, func(json.RawMessage) (ToolResult, error) { return ToolResult{}, nil }); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if err := s.RemoveTool("plain"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveTool("plain"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v", err)
	}
}

const reloadConfig = `
categories:
  - {name: alpha, description: A, system_prompt: "You are alpha.", model: MODEL}
  - {name: general, description: G, system_prompt: "You are general.", model: model-g}
classifier: {kind: rules, rules: {alpha: {keywords: [zebra]}}}
`

func TestServerReload(t *testing.T) {
	s, err := NewServer(strings.Replace(reloadConfig, "MODEL", "model-a", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	model := func() string {
		t.Helper()
		out, err := s.Call([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"classify_text","arguments":{"text":"zebra"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Result struct {
				StructuredContent struct{ Model string } `json:"structuredContent"`
			}
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return r.Result.StructuredContent.Model
	}
	if m := model(); m != "model-a" {
		t.Fatal(m)
	}
	if g, err := s.Reload(strings.Replace(reloadConfig, "MODEL", "model-b", 1)); err != nil || g != 2 {
		t.Fatalf("%d %v", g, err)
	}
	if m := model(); m != "model-b" {
		t.Fatal(m)
	}
	if g, err := s.Reload("classifier: {kind: bogus}\n"); !errors.Is(err, ErrConfig) || g != 2 {
		t.Fatalf("%d %v", g, err)
	}
	if m := model(); m != "model-b" {
		t.Fatal("a refused configuration changed the classifier:", m)
	}
}

func TestServerWithHostClassifier(t *testing.T) {
	c, err := NewHostClassifier("", func(_ string, p []float64) error { p[2] = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer("", c)
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // the server keeps it alive
	out, err := s.Call([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"classify_text","arguments":{"text":"anything"}}}`))
	if err != nil || !strings.Contains(string(out), `\"class\":2`) {
		t.Fatalf("%s %v", out, err)
	}
	s.Close()
	s.Close()
	if _, err := s.Call([]byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
	if _, err := NewServer("", c); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestServerHTTP(t *testing.T) {
	s, err := NewServer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port, err := s.StartHTTP("127.0.0.1", 0)
	if err != nil || port == 0 || s.Port() != port {
		t.Fatalf("%d %v", port, err)
	}
	if _, err := s.StartHTTP("127.0.0.1", 0); !errors.Is(err, ErrState) {
		t.Fatalf("got %v", err)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"categories":["math","science","technology","history","general"]`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	other, err := NewServer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.StartHTTP("127.0.0.1", port); !errors.Is(err, ErrTransport) {
		t.Fatalf("got %v", err)
	}
	s.Stop()
	if s.Port() != 0 {
		t.Fatal("port after Stop")
	}
}

func TestServerStdio(t *testing.T) {
	s, err := NewServer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer inR.Close()
	defer outR.Close()
	defer outW.Close()
	if err := s.StartStdio(inR, outW); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go","version":"1"}}}`)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"serverInfo"`) {
		t.Fatal(lines.Text())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"classify_text","arguments":{"text":"What is 2+2?"}}}`)
	if !lines.Scan() || !strings.Contains(lines.Text(), `\"class\":0`) {
		t.Fatal(lines.Text())
	}
	inW.Close()
	if err := s.WaitStdio(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkClassify(b *testing.B) {
	c := mustOpen(b, "")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Classify("What is the derivative of x squared?"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClassifyParallel(b *testing.B) {
	c := mustOpen(b, "")
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Classify("What is the derivative of x squared?"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A classifier of kind remote on a server made here: the server's categories and answers; once
// the server is gone, ErrUnavailable naming it.
func TestRemoteClassifier(t *testing.T) {
	s, err := NewServer(testConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port, err := s.StartHTTP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	where := fmt.Sprintf("127.0.0.1:%d", port)
	remote := fmt.Sprintf("classifier:\n  kind: remote\n  remote: {url: 'http://%s/mcp', "+
		"timeout: 5, max_retries: 0, fallback_category: general}\n", where)
	c, err := Open(remote)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cats, err := c.Categories()
	if err != nil || len(cats) != 2 || cats[0].Name != "math" || cats[1].Name != "general" {
		t.Fatalf("%+v %v", cats, err)
	}
	if r, err := c.Classify("an algebra question"); err != nil || r.Category != "math" {
		t.Fatalf("%+v %v", r, err)
	}
	s.Stop()
	if _, err := c.Classify("an algebra question"); !errors.Is(err, ErrUnavailable) ||
		!strings.Contains(err.Error(), where) {
		t.Fatalf("got %v", err)
	}
	if _, err := Open(remote); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), where) {
		t.Fatalf("got %v", err)
	}
}

// A learned (libtorch) classifier through the binding: kNN over USE-lite embeddings of
// tests/data/training_data.csv (models/router5-knn.yaml; the model comes from the cache
// models/fetch-use-lite.sh fills, ctest runs it first), from many goroutines. ctest says whether the torch component is built.
func TestLearnedClassifier(t *testing.T) {
	torch, ok := os.LookupEnv("MCPCLASS_TEST_TORCH")
	if !ok {
		t.Skip("MCPCLASS_TEST_TORCH is not set (ctest sets it to the build's MCPCLASS_WITH_LEARNED)")
	}
	// models/router5-knn.yaml with the example path made absolute.
	root := os.Getenv("MCPCLASS_TEST_SOURCE_DIR")
	data, err := os.ReadFile(filepath.Join(root, "models", "router5-knn.yaml"))
	if err != nil || !strings.Contains(string(data), "examples: tests/") {
		t.Fatalf("models/router5-knn.yaml: %v", err)
	}
	config := strings.Replace(string(data), "examples: tests/", "examples: "+root+"/tests/", 1)
	if torch != "1" {
		// Without the component the library refuses the kind, naming what is missing.
		if _, err := Open(config); !errors.Is(err, ErrConfig) ||
			!strings.Contains(err.Error(), "MCPCLASS_WITH_LEARNED=OFF") {
			t.Fatalf("got %v", err)
		}
		t.Skip("the learned classifiers are not built (MCPCLASS_WITH_LEARNED=OFF)")
	}
	c := mustOpen(t, config)
	texts := map[string]string{
		"Compute the integral of x cubed":          "math",
		"How do vaccines train the immune system?": "science",
		"How do I set up a Kubernetes cluster?":    "technology",
		"What caused the fall of the Berlin Wall?": "history",
	}
	for text, want := range texts {
		r, err := c.Classify(text)
		if err != nil || r.Category != want || len(r.Probabilities) != 5 || r.Confidence <= 0.5 {
			t.Fatalf("%q: %+v %v", text, r, err)
		}
		sum := 0.0
		for _, p := range r.Probabilities {
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("%q: probabilities sum to %v", text, sum)
		}
	}
	classifyConcurrently(t, c, texts, 8, 5)
}

// server.http.auth reaches the server through the binding: off loopback it needs tokens, and
// with them every request but the bare /health needs one.
func TestServerHTTPAuthFromTheConfig(t *testing.T) {
	open, err := NewServer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.StartHTTP("0.0.0.0", 0); !errors.Is(err, ErrTransport) ||
		!strings.Contains(err.Error(), "allow_unauthenticated") {
		t.Fatalf("got %v", err)
	}
	t.Setenv("MCPCLASS_GO_TOKEN", "g0-token")
	s, err := NewServer(testConfig+"server:\n  http:\n    auth: {bearer_tokens: ['${MCPCLASS_GO_TOKEN}']}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port, err := s.StartHTTP("0.0.0.0", 0)
	if err != nil {
		t.Fatal(err)
	}
	post := func(token string) (int, string) {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp/tools/call", port),
			strings.NewReader(`{"name":"classify_text","arguments":{"text":"an algebra question"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Host = "mcp.example.com"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := post(""); code != 401 {
		t.Fatalf("no token: %d %s", code, body)
	}
	if code, body := post("wrong"); code != 401 {
		t.Fatalf("wrong token: %d %s", code, body)
	}
	if code, body := post("g0-token"); code != 200 || !strings.Contains(body, `"class":0`) {
		t.Fatalf("token: %d %s", code, body)
	}
}
