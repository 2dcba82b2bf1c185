package mcpclass

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// One base shared by several LoRA adapters through Tasks and Task: each task's probabilities
// against the PyTorch reference of tests/transformers/make_lora_fixtures.py (the adapter applied
// unmerged), an unknown task, and a rules classifier without tasks.
func TestTasks(t *testing.T) {
	rules := openAlgebraRules(t)
	defer rules.Close()
	if names, err := rules.Tasks(); err != nil || len(names) != 0 {
		t.Fatalf("rules tasks: %v %v", names, err)
	}
	if _, err := rules.Task("intent"); !errors.Is(err, ErrNotFound) ||
		!strings.Contains(err.Error(), "has no tasks") {
		t.Fatalf("a rules classifier gave a task: %v", err)
	}
	if os.Getenv("MCPCLASS_TEST_TORCH") != "1" {
		t.Skip("the learned component is not built (MCPCLASS_TEST_TORCH)")
	}
	fixtures := filepath.Join(os.Getenv("MCPCLASS_TEST_SOURCE_DIR"), "tests", "transformers", "fixtures")
	base, err := Open("classifier:\n  kind: transformer\n  model: " + filepath.Join(fixtures, "bert-f32") +
		"\n  adapters:\n    intent: " + filepath.Join(fixtures, "bert-lora") +
		"\n    jailbreak: " + filepath.Join(fixtures, "bert-lora-jailbreak") +
		"\n    topic: " + filepath.Join(fixtures, "bert-lora-topic") + "\n  task: jailbreak\n")
	if err != nil {
		t.Fatal(err)
	}
	names, err := base.Tasks()
	if err != nil || !reflect.DeepEqual(names, []string{"jailbreak", "intent", "topic"}) {
		t.Fatalf("tasks: %v %v", names, err)
	}
	if _, err := base.Task("nothing"); !errors.Is(err, ErrNotFound) ||
		!strings.Contains(err.Error(), "tasks are jailbreak, intent, topic") {
		t.Fatalf("an unknown task: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(fixtures, "lora_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Texts  []string `json:"texts"`
		Models map[string]struct {
			Logits [][]float64 `json:"logits"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	fixture := map[string]string{"intent": "bert-lora", "jailbreak": "bert-lora-jailbreak", "topic": "bert-lora-topic"}
	tasks := map[string]*Classifier{}
	for _, name := range names {
		if tasks[name], err = base.Task(name); err != nil {
			t.Fatal(err)
		}
	}
	base.Close() // each task keeps the base alive
	for name, c := range tasks {
		for _, i := range []int{1, 6, 13} {
			got, err := c.Classify(ref.Texts[i])
			if err != nil {
				t.Fatal(err)
			}
			want := softmaxOf(ref.Models[fixture[name]].Logits[i])
			for k := range want {
				if math.Abs(got.Probabilities[k]-want[k]) > 1e-4 {
					t.Fatalf("%s text %d: %v, want %v", name, i, got.Probabilities, want)
				}
			}
		}
		c.Close()
	}
}

func softmaxOf(row []float64) []float64 {
	top := row[0]
	for _, v := range row {
		top = math.Max(top, v)
	}
	out := make([]float64, len(row))
	sum := 0.0
	for i, v := range row {
		out[i] = math.Exp(v - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}
