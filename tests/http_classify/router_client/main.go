// Command router_client is the vLLM Semantic Router's http_classify client as a program: the
// request it sends and the checks it makes on the answer, as its Go source states them
// (src/semantic-router/pkg/classification/http_classifier.go, read at commit
// 07a15d581a7f095d78698515d7e5f354a07ae381). That file imports the router's config package, so it
// cannot run alone; this program re-states its behaviour step by step with the standard library
// only (written for mcpclass, not copied):
//
//   - POST <base>/classify, body {"inputs": "<text>"} (json.Marshal of a struct with one field),
//     headers Content-Type and Accept application/json, Authorization "Bearer <key>" when a key
//     is set; the http.Client and the request context bounded by the timeout (5 s by default);
//   - a status outside 2xx is an error carrying the status and the body;
//   - the body decodes into []{label string, score float32}; an empty list is an error;
//   - each label must be in the configured mapping, at most once, with a finite score in [0, 1];
//     every configured label must be present; the float32 sum must lie within 0.02 of 1;
//   - the result is the probabilities in the mapping's index order.
//
// Usage: router_client -base URL [-key K] [-timeout 5s] -labels a,b,c TEXT
// Prints {"probabilities": [...]} and exits 0, or prints the error and exits 1.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"
)

const sumTolerance = 0.02

type request struct {
	Inputs string `json:"inputs"`
}

type labelScore struct {
	Label string  `json:"label"`
	Score float32 `json:"score"`
}

func post(ctx context.Context, client *http.Client, base, key, text string) ([]labelScore, error) {
	payload, err := json.Marshal(request{Inputs: text})
	if err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/classify", bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("request failed: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, fmt.Errorf("endpoint returned status %d: %s", resp.StatusCode, body)
	}
	var scores []labelScore
	if err := json.Unmarshal(body, &scores); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(scores) == 0 {
		return nil, errors.New("response contained no labels")
	}
	return scores, nil
}

// align matches labels by name, never by position: a server may order them as it likes.
func align(labels []string, scores []labelScore) ([]float32, error) {
	index := map[string]int{}
	for i, l := range labels {
		index[l] = i
	}
	out := make([]float32, len(labels))
	seen := make([]bool, len(labels))
	var got []string
	var sum float32
	for _, s := range scores {
		got = append(got, s.Label)
		i, ok := index[s.Label]
		if !ok {
			return nil, fmt.Errorf("label %q is not in the configured label mapping", s.Label)
		}
		if seen[i] {
			return nil, fmt.Errorf("duplicate label %q", s.Label)
		}
		f := float64(s.Score)
		if math.IsNaN(f) || math.IsInf(f, 0) || s.Score < 0 || s.Score > 1 {
			return nil, fmt.Errorf("label %q has an invalid score %v", s.Label, s.Score)
		}
		seen[i] = true
		out[i] = s.Score
		sum += s.Score
	}
	for i, present := range seen {
		if !present {
			return nil, fmt.Errorf("response is missing label %q (got %v)", labels[i], got)
		}
	}
	if math.Abs(float64(sum)-1.0) > sumTolerance {
		return nil, fmt.Errorf("scores sum to %v, want ~1.0 (labels: %v)", sum, got)
	}
	return out, nil
}

func main() {
	base := flag.String("base", "", "scheme://host:port of the endpoint")
	key := flag.String("key", "", "access key (Bearer)")
	timeout := flag.Duration("timeout", 5*time.Second, "per-request timeout")
	labels := flag.String("labels", "", "the configured labels, comma-separated, in index order")
	flag.Parse()
	if *base == "" || *labels == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: router_client -base URL [-key K] -labels a,b TEXT")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	scores, err := post(ctx, &http.Client{Timeout: *timeout}, *base, *key, flag.Arg(0))
	if err == nil {
		var probabilities []float32
		if probabilities, err = align(strings.Split(*labels, ","), scores); err == nil {
			_ = json.NewEncoder(os.Stdout).Encode(map[string][]float32{"probabilities": probabilities})
			return
		}
	}
	fmt.Fprintln(os.Stderr, "http_classify:", err)
	os.Exit(1)
}
