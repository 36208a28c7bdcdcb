package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// receiverConfig configures the demo's fake webhook receiver.
type receiverConfig struct {
	Secret   []byte                   // verify X-Hook0-Signature; empty accepts unsigned requests
	FailRate float64                  // share of requests answered 500, drawn per (subscription, sequence, try) from Seed
	Seed     uint64                   // makes the failures repeatable
	Latency  time.Duration            // time taken to answer each request
	Down     map[string]time.Duration // subscription → answers 503 for this long after the receiver starts
	Broken   map[string]bool          // subscription → always answers 500
	Now      func() time.Time         // the receiver's clock, for signatures and Down; nil is time.Now
}

// A receiver plays every subscription's endpoint at /hooks/NAME: it
// verifies signatures, fails as configured, and records the evidence of
// FIFO delivery (inbox).
type receiver struct {
	cfg   receiverConfig
	start time.Time

	mu             sync.Mutex
	inbox          map[string]*inbox
	badSig, badReq int
}

// An inbox is what one subscription's endpoint saw.
type inbox struct {
	requests    []uint64 // the sequence of every request, retries included
	fences      []uint64 // the X-Hook0-Fence of every request, 0 without
	accepted    []uint64 // the sequence of every request answered 2xx
	tries       map[uint64]int
	inFlight    int
	maxInFlight int
}

func newReceiver(cfg receiverConfig) *receiver {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &receiver{cfg: cfg, start: cfg.Now(), inbox: map[string]*inbox{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/hooks/")
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var d delivery
	if r.Method != http.MethodPost || !ok || err != nil || json.Unmarshal(body, &d) != nil || d.Subscription != name {
		rc.locked(func() { rc.badReq++ })
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if len(rc.cfg.Secret) > 0 {
		if err := verify(rc.cfg.Secret, r.Header.Get(signatureHeader), body, rc.cfg.Now()); err != nil {
			rc.locked(func() { rc.badSig++ })
			http.Error(w, signatureHeader+": "+err.Error(), http.StatusUnauthorized)
			return
		}
	}
	fence, _ := strconv.ParseUint(r.Header.Get(fenceHeader), 10, 64)
	var b *inbox
	try := 0
	rc.locked(func() {
		if b = rc.inbox[name]; b == nil {
			b = &inbox{tries: map[uint64]int{}}
			rc.inbox[name] = b
		}
		b.tries[d.Sequence]++
		try = b.tries[d.Sequence]
		b.requests, b.fences = append(b.requests, d.Sequence), append(b.fences, fence)
		b.inFlight++
		b.maxInFlight = max(b.maxInFlight, b.inFlight)
	})
	defer rc.locked(func() { b.inFlight-- })
	select {
	case <-time.After(rc.cfg.Latency):
	case <-r.Context().Done():
		return
	}
	status := http.StatusOK
	switch {
	case rc.cfg.Broken[name]:
		status = http.StatusInternalServerError
	case rc.cfg.Now().Sub(rc.start) < rc.cfg.Down[name]:
		status = http.StatusServiceUnavailable
	case draw(rc.cfg.Seed, name, d.Sequence, try) < rc.cfg.FailRate:
		status = http.StatusInternalServerError
	default:
		rc.locked(func() { b.accepted = append(b.accepted, d.Sequence) })
	}
	w.WriteHeader(status)
}

// draw returns a number in [0, 1) that depends only on its arguments, so a
// run fails the same requests whatever the scheduling.
func draw(seed uint64, name string, seq uint64, try int) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", name, seq, try)
	return rand.New(rand.NewPCG(seed, h.Sum64())).Float64()
}

// locked runs f holding rc.mu.
func (rc *receiver) locked(f func()) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	f()
}

// snapshot returns a copy of every inbox and the number of requests
// refused for a bad signature or a malformed body.
func (rc *receiver) snapshot() (boxes map[string]inbox, badSig, badReq int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	boxes = map[string]inbox{}
	for name, b := range rc.inbox {
		boxes[name] = inbox{requests: slices.Clone(b.requests), fences: slices.Clone(b.fences), accepted: slices.Clone(b.accepted), maxInFlight: b.maxInFlight}
	}
	return boxes, rc.badSig, rc.badReq
}

// fifoViolation returns what breaks FIFO delivery in b, or "": a request
// overlapped another, a request went back to an earlier message, or an
// accepted message did not follow the one accepted before it.
func (b inbox) fifoViolation() string {
	if b.maxInFlight > 1 {
		return fmt.Sprintf("%d requests in flight at once", b.maxInFlight)
	}
	for i := 1; i < len(b.requests); i++ {
		if b.requests[i] < b.requests[i-1] {
			return fmt.Sprintf("request for #%d after #%d", b.requests[i], b.requests[i-1])
		}
	}
	for i := 1; i < len(b.accepted); i++ {
		if b.accepted[i] <= b.accepted[i-1] {
			return fmt.Sprintf("#%d accepted after #%d", b.accepted[i], b.accepted[i-1])
		}
	}
	return ""
}

// fenceViolation returns the first request whose X-Hook0-Fence is below
// one seen before (a stale holder went on sending), or "".
func (b inbox) fenceViolation() string {
	var top uint64
	for i, f := range b.fences {
		if f != 0 && f < top {
			return fmt.Sprintf("request for #%d with fence %d after fence %d", b.requests[i], f, top)
		}
		top = max(top, f)
	}
	return ""
}

// reordered counts the accepted messages that arrived after a later one.
func (b inbox) reordered() int {
	n := 0
	var top uint64
	for _, s := range b.accepted {
		if s < top {
			n++
		}
		top = max(top, s)
	}
	return n
}

// print writes what each endpoint saw, for -receive.
func (rc *receiver) print(w io.Writer) {
	boxes, badSig, badReq := rc.snapshot()
	for _, name := range slices.Sorted(maps.Keys(boxes)) {
		b := boxes[name]
		order := "one request at a time, in sequence order (FIFO held)"
		if v := b.fifoViolation(); v != "" {
			order = "not FIFO: " + v
		}
		fmt.Fprintf(w, "  %s: %d requests, %d accepted, at most %d in flight; %s\n", name, len(b.requests), len(b.accepted), b.maxInFlight, order)
	}
	fmt.Fprintf(w, "  %d bad signatures, %d bad requests\n", badSig, badReq)
}
