// router: the in-process routing step of an LLM router. It reads an OpenAI-style chat request
// (stdin, or a built-in sample), classifies the last user message with mcpclass, picks the model
// and the reasoning setting, injects the category's system prompt, and prints the request to send
// upstream.
//
//	go run ./examples/router < request.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/mcpclass/mcpclass/bindings/go"
)

const sample = `{"model":"auto","messages":[{"role":"user","content":"What is the derivative of x^3 + 2x?"}]}`

// Route rewrites req in place: model, reasoning effort, and a system prompt for the category.
func Route(c *mcpclass.Classifier, req map[string]any) (mcpclass.Result, error) {
	messages, _ := req["messages"].([]any)
	text := ""
	for i := len(messages) - 1; i >= 0 && text == ""; i-- {
		if m, ok := messages[i].(map[string]any); ok && m["role"] == "user" {
			text, _ = m["content"].(string)
		}
	}
	if text == "" {
		return mcpclass.Result{}, fmt.Errorf("no user message to classify")
	}
	r, err := c.Classify(text)
	if err != nil {
		return r, err
	}
	cats, err := c.Categories()
	if err != nil {
		return r, err
	}
	req["model"] = r.Model
	if r.UseReasoning {
		req["reasoning_effort"] = "medium"
	} else {
		delete(req, "reasoning_effort")
	}
	system := map[string]any{"role": "system", "content": cats[r.Class].SystemPrompt}
	if len(messages) > 0 {
		if m, ok := messages[0].(map[string]any); ok && m["role"] == "system" {
			messages[0] = system // the category's prompt replaces a generic one
			return r, nil
		}
	}
	req["messages"] = append([]any{system}, messages...)
	return r, nil
}

func main() {
	input := []byte(sample)
	if st, _ := os.Stdin.Stat(); st != nil && st.Mode()&os.ModeCharDevice == 0 {
		var err error
		if input, err = io.ReadAll(os.Stdin); err != nil {
			log.Fatal(err)
		}
	}
	var req map[string]any
	if err := json.Unmarshal(input, &req); err != nil {
		log.Fatalf("request: %v", err)
	}
	c, err := mcpclass.Open(os.Getenv("MCPCLASS_CONFIG_TEXT"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r, err := Route(c, req)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("category %s (confidence %.2f, entropy %.2f bits) -> %s, reasoning %v",
		r.Category, r.Confidence, r.Entropy, r.Model, r.UseReasoning)
	out, _ := json.MarshalIndent(req, "", "  ")
	fmt.Println(string(out))
}
