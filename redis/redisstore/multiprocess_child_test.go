//go:build unix

package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// childEnv holds, as JSON, the childConfig of a test binary re-executed to
// be one instance of TestMultiProcessKill.
const childEnv = "PACER_REDISSTORE_CHILD"

// childConfig configures one instance: a pacer Runner on a Redis queue.
type childConfig struct {
	URL      string
	Prefix   string
	Name     string
	Log      string // the event log the instance appends to
	Workers  int
	MaxBatch int
	Debounce time.Duration
	MaxWait  time.Duration
	LeaseTTL time.Duration
}

// TestChildHelper is not a test: re-executed by TestMultiProcessKill with
// childEnv set, it runs one instance, a pacer Runner on a Redis queue, and
// speaks a line protocol with the parent until its stdin closes, then
// shuts the Runner down.
//
// On stdin: "add KEY VALUE" adds VALUE to KEY; "freeze" makes the next
// call of each worker block, once it did its work, until its ctx ends;
// "stop-after-claim" makes the process stop itself (SIGSTOP) right after
// its next Claim that leased a key, before the lease reaches a worker,
// and answers "armed" once it will.
// On stdout: "ready" once the Runner runs; "ack VALUE" once Add returned
// nil, "nack VALUE ERR" if it failed; "frozen KEY FENCE" when a handler
// call blocks; "armed" once "stop-after-claim" holds; "claimed KEY
// FENCE" before the process stops itself; "lapsed KEY" when the Runner
// left a batch whose lease lapsed before its handler started.
//
// The handler appends one line per event to the event log (see eventLog),
// where the parent reads what ran, where, when and under which fence.
func TestChildHelper(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("child process of TestMultiProcessKill")
	}
	var cfg childConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	opt, err := redis.ParseURL(cfg.URL)
	require.NoError(t, err)
	c := redistest.Dial(t, opt)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: cfg.Prefix})
	require.NoError(t, err)
	defer s.Close()
	log, err := openEventLog(cfg.Log)
	require.NoError(t, err)
	defer log.Close()

	var freeze atomic.Int32
	var stopAfterClaim atomic.Bool
	h := func(ctx context.Context, key string, batch []int) error {
		fence, _ := pacer.Fence(ctx)
		log.write("S", key, fence, pacer.Attempt(ctx), time.Now().UnixNano(), joinInts(batch))
		pause := time.NewTimer(rand.N(3 * time.Millisecond))
		defer pause.Stop()
		select {
		case <-pause.C:
		case <-ctx.Done():
			log.write("E", key, fence, time.Now().UnixNano(), "lost")
			return ctx.Err()
		}
		log.write("D", key, fence, time.Now().UnixNano())
		if take(&freeze) {
			// The work is done but not acknowledged: a kill now makes the
			// batch run again.
			say("frozen %s %d", key, fence)
			<-ctx.Done()
			log.write("E", key, fence, time.Now().UnixNano(), "lost")
			return ctx.Err()
		}
		log.write("E", key, fence, time.Now().UnixNano(), "ok")
		return nil
	}
	r, err := pacer.New(pacer.Config[string, int]{
		Store:    ackLog{Store: s, log: log, stopAfterClaim: &stopAfterClaim},
		Name:     cfg.Name,
		Workers:  cfg.Workers,
		MaxBatch: cfg.MaxBatch,
		Debounce: cfg.Debounce,
		MaxWait:  cfg.MaxWait,
		LeaseTTL: cfg.LeaseTTL,
		OnDrop:   func(key string, _ []int, err error) { log.write("X", key, err) },
		Logger:   slog.New(lapseSayer{}),
	}, h)
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(context.Background()) }()
	say("ready")

	var adds sync.WaitGroup
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 1 && f[0] == "freeze":
			freeze.Store(int32(cfg.Workers))
		case len(f) == 1 && f[0] == "stop-after-claim":
			stopAfterClaim.Store(true)
			say("armed")
		case len(f) == 3 && f[0] == "add":
			v, err := strconv.Atoi(f[2])
			require.NoError(t, err)
			adds.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := r.Add(ctx, f[1], v); err != nil {
					say("nack %d %v", v, err)
					return
				}
				say("ack %d", v)
			})
		default:
			t.Fatalf("unknown command %q", lines.Text())
		}
	}
	require.NoError(t, lines.Err())
	adds.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, r.Shutdown(ctx))
	require.NoError(t, <-ran)
}

// take takes one from n if it is positive.
func take(n *atomic.Int32) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// say writes one line of the protocol to stdout, in one write.
func say(format string, args ...any) {
	_, _ = os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
}

// ackLog logs each Ack that the engine accepted, so that the parent tells
// the batches a killed instance had finished from those it had in flight;
// and stops the process after a Claim when told to.
type ackLog struct {
	*redisstore.Store
	log            *eventLog
	stopAfterClaim *atomic.Bool
}

func (s ackLog) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	leases, next, err := s.Store.Claim(ctx, queue, p)
	if len(leases) > 0 && s.stopAfterClaim.CompareAndSwap(true, false) {
		say("claimed %s %d", leases[0].Key, leases[0].Fence)
		// Stopped until the parent continues it, the process holds the
		// leases it has not handed to a worker yet.
		stopSelf()
	}
	return leases, next, err
}

// The Runner ends a batch and claims its next in one call where it can.
var _ store.FinishClaimer = ackLog{}

func (s ackLog) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	more, err := s.Store.Finish(ctx, l, o)
	s.logAck(l, o, err)
	return more, err
}

func (s ackLog) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	more, leases, next, err := s.Store.FinishAndClaim(ctx, l, o, p)
	s.logAck(l, o, err)
	return more, leases, next, err
}

func (s ackLog) logAck(l store.Lease, o store.Outcome, err error) {
	if err == nil && o.Kind == store.Ack {
		s.log.write("F", l.Key, l.Fence)
	}
}

// lapseSayer is a slog.Handler that says "lapsed KEY" for each batch the
// Runner left because its lease lapsed before its handler started.
type lapseSayer struct{}

func (lapseSayer) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (lapseSayer) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "lapsed before the handler started") {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "key" {
				say("lapsed %v", a.Value)
				return false
			}
			return true
		})
	}
	return nil
}

func (h lapseSayer) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lapseSayer) WithGroup(string) slog.Handler      { return h }

func joinInts(vs []int) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}
