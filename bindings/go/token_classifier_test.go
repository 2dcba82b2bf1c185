package mcpclass

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The token classifier of tests/transformers/fixtures/bert-token-f32 (a BertForTokenClassification
// PII fixture) through the binding: its spans are those the reference pipeline port in
// tests/transformers/make_token_fixtures.py computed, and a Server built from the same
// configuration answers detect_pii with the same JSON.
func TestTokenClassifier(t *testing.T) {
	learned, ok := os.LookupEnv("MCPCLASS_TEST_TORCH")
	if !ok {
		t.Skip("MCPCLASS_TEST_TORCH is not set (ctest sets it to the build's MCPCLASS_WITH_LEARNED)")
	}
	root := os.Getenv("MCPCLASS_TEST_SOURCE_DIR")
	fixtures := filepath.Join(root, "tests", "transformers", "fixtures")
	config := "token_classifier:\n  model: " + filepath.Join(fixtures, "bert-token-f32") +
		"\n  aggregation: first\n"
	if learned != "1" {
		if _, err := OpenTokenClassifier(config); !errors.Is(err, ErrConfig) {
			t.Fatalf("got %v", err)
		}
		t.Skip("the learned component is not built")
	}
	tc, err := OpenTokenClassifier(config)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	raw, err := os.ReadFile(filepath.Join(fixtures, "token_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Texts []struct {
			Text  string            `json:"text"`
			Spans map[string][]Span `json:"spans"`
		} `json:"texts"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, item := range ref.Texts {
		for _, strategy := range []string{"", "simple", "max"} {
			want := item.Spans[strategy]
			if strategy == "" {
				want = item.Spans["first"] // the configured strategy
			}
			got, err := tc.Detect(item.Text, strategy)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%q %s: %d spans, want %d", item.Text, strategy, len(got), len(want))
			}
			for i, g := range got {
				w := want[i]
				if g.EntityGroup != w.EntityGroup || g.Word != w.Word || g.Start != w.Start || g.End != w.End ||
					g.Score-w.Score > 1e-4 || w.Score-g.Score > 1e-4 {
					t.Fatalf("%q %s span %d: got %+v, want %+v", item.Text, strategy, i, g, w)
				}
				// Code points and bytes name the same text.
				if utf8.RuneCountInString(item.Text[:g.ByteStart]) != g.Start ||
					utf8.RuneCountInString(item.Text[:g.ByteEnd]) != g.End {
					t.Fatalf("%q: byte and code-point offsets disagree: %+v", item.Text, g)
				}
				spans++
			}
		}
	}
	if spans < 100 {
		t.Fatalf("only %d spans compared", spans)
	}
	if _, err := tc.Detect("", ""); !errors.Is(err, ErrInvalidText) {
		t.Fatalf("empty text: got %v", err)
	}
	if _, err := tc.Detect("hi", "mean"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad aggregation: got %v", err)
	}

	s, err := NewServer(config, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text := ref.Texts[0].Text
	direct, err := tc.DetectJSON(text, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Call([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"detect_pii","arguments":{"text":` +
		strings.ReplaceAll(string(mustJSON(t, text)), "\n", "") + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"structuredContent":`+string(direct)) {
		t.Fatalf("tool answer %s does not hold %s", out, direct)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
