// bench: in-process classify latency from Go, median of many calls.
package main

import (
	"fmt"
	"log"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/mcpclass/mcpclass/bindings/go"
)

func main() {
	n := 20000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	c, err := mcpclass.Open("")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	d := make([]time.Duration, 0, n)
	for i := -1000; i < n; i++ {
		start := time.Now()
		if _, err := c.Classify("What is the derivative of x squared?"); err != nil {
			log.Fatal(err)
		}
		if i >= 0 {
			d = append(d, time.Since(start))
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	fmt.Printf("Go      in-process classify: median %.1f us, p99 %.1f us (%d calls)\n",
		float64(d[n/2].Nanoseconds())/1e3, float64(d[n*99/100].Nanoseconds())/1e3, n)
}
