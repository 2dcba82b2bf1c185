package mcpclass

import (
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"
)

// Cross-encoder reranking through Rerank and RerankJSON: the bert-reranker fixture against the
// PyTorch reference of tests/transformers/make_pair_fixtures.py, and a rules classifier refusing.
func TestRerank(t *testing.T) {
	rules := openAlgebraRules(t)
	defer rules.Close()
	if _, err := rules.Rerank("algebra", []string{"x"}, 0); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "(rules) does not rerank") {
		t.Fatalf("a rules classifier reranked: %v", err)
	}
	c, raw := openFixture(t, "bert-reranker")
	defer c.Close()
	var ref struct {
		Reranker struct {
			Documents []string `json:"documents"`
			Queries   []struct {
				Query  string    `json:"query"`
				Scores []float64 `json:"scores"`
			} `json:"queries"`
		} `json:"reranker"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	q := ref.Reranker.Queries[1]
	picked := []int{1, 2, 3, 4, 5, 6}
	documents := make([]string, len(picked))
	want := make([]int, len(picked))
	for n, i := range picked {
		documents[n] = ref.Reranker.Documents[i]
		want[n] = n
	}
	sort.SliceStable(want, func(a, b int) bool { return q.Scores[picked[want[a]]] > q.Scores[picked[want[b]]] })
	ranked, err := c.Rerank(q.Query, documents, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranked) != 4 {
		t.Fatalf("top 4: %d results", len(ranked))
	}
	for n, r := range ranked {
		if r.Index != want[n] || math.Abs(r.RelevanceScore-q.Scores[picked[r.Index]]) > 1e-4 {
			t.Errorf("rank %d: document %d score %v; reference document %d score %v", n, r.Index,
				r.RelevanceScore, want[n], q.Scores[picked[want[n]]])
		}
	}
	if _, err := c.RerankJSON([]byte(`{"query": "a", "documents": []}`)); !errors.Is(err, ErrInvalidText) ||
		!strings.Contains(err.Error(), "documents must not be empty") {
		t.Fatalf("an empty reranking: %v", err)
	}
}
