package mcpclass

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openAlgebraRules is a rules classifier of two categories (math on "algebra", else other).
func openAlgebraRules(t *testing.T) *Classifier {
	rules, err := Open(`
categories:
  - {name: math, description: Math}
  - {name: other, description: Other}
classifier: {kind: rules, fallback: other, rules: {math: {keywords: [algebra]}}}
`)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// openFixture is kind transformer over tests/transformers/fixtures/name, with
// pair-reference.json's bytes; it skips the test where the learned component is not built.
func openFixture(t *testing.T, name string) (*Classifier, []byte) {
	if os.Getenv("MCPCLASS_TEST_TORCH") != "1" {
		t.Skip("the learned component is not built (MCPCLASS_TEST_TORCH)")
	}
	fixtures := filepath.Join(os.Getenv("MCPCLASS_TEST_SOURCE_DIR"), "tests", "transformers", "fixtures")
	c, err := Open("classifier:\n  kind: transformer\n  model: " + filepath.Join(fixtures, name) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(fixtures, "pair-reference.json"))
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, raw
}

// Sentence pairs through ClassifyPairJSON: the BERT fixture's pairs against the PyTorch
// reference of tests/transformers/make_pair_fixtures.py, and a rules classifier refusing one.
func TestClassifyPair(t *testing.T) {
	rules := openAlgebraRules(t)
	defer rules.Close()
	if _, err := rules.ClassifyPairJSON("algebra", "x", false, false); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "(rules) classifies one text") {
		t.Fatalf("a rules classifier took a pair: %v", err)
	}
	c, raw := openFixture(t, "bert-f32")
	defer c.Close()
	var ref struct {
		Pairs  [][2]string `json:"pairs"`
		Models map[string]struct {
			Logits [][]float64 `json:"logits"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 3, 7, 12} { // pair 0 starts with the empty text, refused
		out, err := c.ClassifyPairJSON(ref.Pairs[i][0], ref.Pairs[i][1], true, false)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Probabilities []float64 `json:"probabilities"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		for j, want := range softmaxOf(ref.Models["bert"].Logits[i]) {
			if math.Abs(got.Probabilities[j]-want) > 1e-4 {
				t.Errorf("pair %d label %d: %v, reference %v", i, j, got.Probabilities[j], want)
			}
		}
	}
}
