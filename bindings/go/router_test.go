package mcpclass

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// routerPath is the configuration both bindings' Router tests read.
const routerPath = "../testdata/router.yaml"

func openTestRouter(t *testing.T) *Router {
	t.Helper()
	r, err := OpenRouterFile(routerPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func askRouter(t *testing.T, r *Router, model, text string) *RouteEvaluation {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"model": model,
		"messages": []any{map[string]any{"role": "user", "content": text}}})
	ev, err := r.Evaluate(req)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

type chatBody struct {
	Model           string            `json:"model"`
	ReasoningEffort string            `json:"reasoning_effort"`
	Kwargs          map[string]any    `json:"chat_template_kwargs"`
	Messages        []json.RawMessage `json:"messages"`
}

func TestRouterDecisionBodyAndFallbacks(t *testing.T) {
	r := openTestRouter(t)
	ev := askRouter(t, r, "auto", "urgent: the build is red")
	var body chatBody
	if err := json.Unmarshal(ev.Body, &body); err != nil {
		t.Fatal(err)
	}
	if ev.Action != "forward" || ev.Decision != "urgent" || ev.Model != "m-a" || !ev.UseReasoning ||
		body.Model != "a-up" || body.ReasoningEffort != "high" ||
		string(body.Messages[0]) != `{"role":"system","content":"Answer fast."}` {
		t.Fatalf("evaluation %+v, body %s", ev, ev.Body)
	}
	if ev.Headers["x-vsr-selected-decision"] != "urgent" || ev.Headers["x-vsr-matched-keywords"] != "urgent" {
		t.Fatalf("headers %v", ev.Headers)
	}
	// The fallback's body is rewritten for its own reasoning family.
	var fb chatBody
	if len(ev.Fallbacks) != 1 || ev.Fallbacks[0].Model != "m-b" || json.Unmarshal(ev.Fallbacks[0].Body, &fb) != nil ||
		fb.Model != "m-b" || fb.Kwargs["enable_thinking"] != true || fb.ReasoningEffort != "" {
		t.Fatalf("fallbacks %+v", ev.Fallbacks)
	}
	// No decision matches: the classifier's category chooses.
	if ev := askRouter(t, r, "auto", "an algebra question"); ev.Decision != "" || ev.Category != "math" || ev.Model != "m-a" {
		t.Fatalf("by category: %+v", ev)
	}
	if ev := askRouter(t, r, "m-b", "urgent"); ev.Action != "passthrough" || ev.Model != "m-b" {
		t.Fatalf("passthrough: %+v", ev)
	}
}

func TestRouterBlockAndReject(t *testing.T) {
	r := openTestRouter(t)
	ev := askRouter(t, r, "auto", "urgent: write to jane.doe@example.com")
	var e struct{ Error struct{ Code string } }
	if ev.Action != "block" || ev.Status != 400 || ev.BlockReason != "pii" || ev.Body != nil ||
		json.Unmarshal(ev.Error, &e) != nil || e.Error.Code != "pii_detected" ||
		ev.Headers["x-vsr-selected-decision"] != "contact_block" || ev.Headers["x-vsr-response-path"] != "blocked" {
		t.Fatalf("block: %+v", ev)
	}
	ev = askRouter(t, r, "gpt-9", "hi")
	if ev.Action != "reject" || ev.Status != 404 || json.Unmarshal(ev.Error, &e) != nil || e.Error.Code != "model_not_found" {
		t.Fatalf("reject: %+v", ev)
	}
	if _, err := r.Evaluate([]byte("[1, 2]")); !errors.Is(err, ErrInvalidText) {
		t.Fatalf("not an object: %v", err)
	}
}

func TestRouterErrorsAndClose(t *testing.T) {
	if _, err := OpenRouter("categories: [{name: a, description: A}]\n", nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("no route section: %v", err)
	}
	text, err := os.ReadFile(routerPath)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := Open(string(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenRouter(string(text), cls)
	if err != nil {
		t.Fatal(err)
	}
	cls.Close() // the router keeps its own reference
	if ev := askRouter(t, r, "auto", "algebra"); ev.Category != "math" {
		t.Fatalf("%+v", ev)
	}
	r.Close()
	r.Close() // idempotent
	if _, err := r.Evaluate([]byte(`{"model":"auto","messages":[]}`)); err != ErrClosed {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := OpenRouter(string(text), cls); err != ErrClosed {
		t.Fatalf("a closed classifier: %v", err)
	}
}

// mcpc_route_evaluate_api_json: the same evaluation for the Responses and Messages shapes, as the
// Python binding's test_router_other_apis checks it.
func TestRouterOtherAPIs(t *testing.T) {
	r := openTestRouter(t)
	raw, err := r.EvaluateAPIJSON("responses", []byte(`{"model":"auto","input":[{"role":"user","content":[{"type":"input_text","text":"urgent: the build is red"}]}]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	var ev RouteEvaluation
	var body struct {
		Model        string            `json:"model"`
		Instructions string            `json:"instructions"`
		Reasoning    map[string]string `json:"reasoning"`
	}
	if json.Unmarshal(raw, &ev) != nil || json.Unmarshal(ev.Body, &body) != nil || ev.Action != "forward" ||
		ev.Decision != "urgent" || body.Model != "a-up" || body.Instructions != "Answer fast." ||
		body.Reasoning["effort"] != "high" {
		t.Fatalf("responses evaluation %s", raw)
	}
	// Every model here is api_format openai: a Messages body gets Anthropic's 400.
	raw, err = r.EvaluateAPIJSON("messages", []byte(`{"model":"auto","max_tokens":8,"messages":[{"role":"user","content":"urgent"}]}`), false)
	if err != nil || json.Unmarshal(raw, &ev) != nil || ev.Action != "reject" || ev.Status != 400 {
		t.Fatalf("messages evaluation %s, %v", raw, err)
	}
	if _, err := r.EvaluateAPIJSON("completions", []byte(`{}`), false); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown api: %v", err)
	}
}
