package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpclass/mcpclass/bindings/go"
)

func TestRoute(t *testing.T) {
	c, err := mcpclass.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var req map[string]any
	if err := json.Unmarshal([]byte(sample), &req); err != nil {
		t.Fatal(err)
	}
	r, err := Route(c, req)
	if err != nil || r.Category != "math" {
		t.Fatalf("%+v %v", r, err)
	}
	msgs := req["messages"].([]any)
	sys := msgs[0].(map[string]any)
	if len(msgs) != 2 || sys["role"] != "system" || !strings.Contains(sys["content"].(string), "mathematics expert") {
		t.Fatalf("%+v", msgs)
	}
	if req["model"] != r.Model {
		t.Fatalf("model %v", req["model"])
	}
	if _, err := Route(c, map[string]any{"messages": []any{}}); err == nil {
		t.Fatal("expected an error without a user message")
	}
}
