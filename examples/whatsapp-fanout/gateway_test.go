package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// gateway is a messaging gateway for the tests that run the program as OS
// processes. It speaks httpSender's protocol and honours Idempotency-Key:
// a message whose key it has delivered before is answered 200 with
// Idempotent-Replayed: true and not delivered again. It records every
// delivery, every request's time per account, and the duplicates it
// suppressed, by the generation (process) the test says is running.
type gateway struct {
	// onDeliver, if set, is called after the n-th delivery (from 1) is
	// recorded and before it is answered.
	onDeliver func(n int)
	latency   time.Duration

	mu         sync.Mutex
	gen        int                    // set by the test: which process runs
	delivered  map[string][]int       // parts in arrival order, by account/group
	at         map[string][]time.Time // when they arrived
	keys       map[string]bool        // idempotency keys delivered
	noKey      int                    // messages without a key
	suppressed map[int]map[string]int // duplicates suppressed, by generation and account
	requests   map[string][]time.Time // every message request, by account
	n          int                    // deliveries
}

func newGateway() *gateway {
	return &gateway{delivered: map[string][]int{}, at: map[string][]time.Time{}, keys: map[string]bool{},
		suppressed: map[int]map[string]int{}, requests: map[string][]time.Time{}}
}

func (g *gateway) setGen(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen = n
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	time.Sleep(g.latency)
	switch r.URL.Path {
	case "/media":
		var in struct{ Account, Source string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"handle":"media-%s"}`, in.Account)
	case "/messages":
		var m message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		g.mu.Lock()
		g.requests[m.Account] = append(g.requests[m.Account], time.Now())
		if key != "" && g.keys[key] {
			if g.suppressed[g.gen] == nil {
				g.suppressed[g.gen] = map[string]int{}
			}
			g.suppressed[g.gen][m.Account]++
			g.mu.Unlock()
			w.Header().Set("Idempotent-Replayed", "true")
			return
		}
		if key == "" {
			g.noKey++
		}
		g.keys[key] = key != ""
		g.delivered[m.Account+"/"+m.Group] = append(g.delivered[m.Account+"/"+m.Group], m.Part)
		g.at[m.Account+"/"+m.Group] = append(g.at[m.Account+"/"+m.Group], time.Now())
		g.n++
		n := g.n
		g.mu.Unlock()
		if g.onDeliver != nil {
			g.onDeliver(n)
		}
	default:
		http.NotFound(w, r)
	}
}

// gatewaySeen is a copy of what a gateway recorded.
type gatewaySeen struct {
	Delivered  map[string][]int
	At         map[string][]time.Time
	NoKey      int
	Suppressed map[int]map[string]int
	Requests   map[string][]time.Time
}

func (g *gateway) seen() gatewaySeen {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := gatewaySeen{Delivered: map[string][]int{}, At: map[string][]time.Time{}, NoKey: g.noKey,
		Suppressed: map[int]map[string]int{}, Requests: map[string][]time.Time{}}
	for k, v := range g.delivered {
		s.Delivered[k] = slices.Clone(v)
		s.At[k] = slices.Clone(g.at[k])
	}
	for gen, m := range g.suppressed {
		s.Suppressed[gen] = maps.Clone(m)
	}
	for a, ts := range g.requests {
		s.Requests[a] = slices.Clone(ts)
	}
	return s
}
