package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// bigKeys is the size of the queue of the page benchmarks.
const bigKeys = 1_000_000

var (
	bigOnce sync.Once
	bigMem  *store.Memory
)

// bigStore returns a Memory whose queue "big" holds bigKeys keys of one
// value each, 1% of them held, and 100 dead letters.
func bigStore(tb testing.TB) *store.Memory {
	bigOnce.Do(func() {
		ctx := context.Background()
		m := store.NewMemory(store.MemoryConfig{})
		val := [][]byte{[]byte(`{"id":1,"kind":"invoice"}`)}
		for i := range bigKeys {
			if err := m.Add(ctx, "big", fmt.Sprintf("tenant-%03d/key-%07d", i%1000, i), val, store.AddParams{}); err != nil {
				panic(err)
			}
		}
		for i := range 100 {
			ls, _, err := m.Claim(ctx, "big", store.ClaimParams{Keys: 1, TTL: time.Hour})
			if err != nil || len(ls) != 1 {
				panic(fmt.Sprint(err, len(ls)))
			}
			kind := store.Hold
			if i%2 == 0 {
				kind = store.Drop
			}
			if _, err := m.Finish(ctx, ls[0], store.Outcome{Kind: kind, Err: "benchmark"}); err != nil {
				panic(err)
			}
		}
		bigMem = m
	})
	return bigMem
}

// BenchmarkPagesMemory renders each page over a queue of 10^6 keys, and
// the fragments of counts that the overview and a queue's page load
// after they show: the time is the store's calls (Memory's Queues and
// Stats visit every key, a page of Keys reads at most 2,000, Key of a
// ready key walks the schedule up to it) plus the console's rendering of
// bounded pages. The second key page shows a ready key with more than
// MaxAhead keys ahead.
func BenchmarkPagesMemory(b *testing.B) {
	mem := bigStore(b)
	h, err := console.New(console.Config{Store: mem, Authorize: func(*http.Request, console.Action) error { return nil }})
	require.NoError(b, err)
	for _, path := range []string{
		"/",
		"/queue?queue=big",
		"/queue?queue=big&limit=100&cursor=" + cursorAfter(b, mem, bigKeys/2),
		"/queue?queue=big&state=held",
		"/queue?queue=big&prefix=tenant-042/",
		"/key?queue=big&key=tenant-042/key-0000042",
		"/key?queue=big&key=tenant-500/key-0500500",
		"/dead?queue=big",
		"/queues",
		"/counts?queue=big",
	} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, rec.Code)
				}
			}
		})
	}
}

// cursorAfter returns the cursor of the page that starts after the first
// n keys of Memory's pages, which follow the order the keys were created
// in: with n = bigKeys/2, the middle of the queue.
func cursorAfter(tb testing.TB, mem *store.Memory, n int) string {
	q := store.KeyQuery{Limit: 1000}
	for read := 0; read < n; {
		p, err := mem.Keys(context.Background(), "big", q)
		require.NoError(tb, err)
		require.NotEmpty(tb, p.Next)
		read += len(p.Keys)
		q.Cursor = p.Next
	}
	return q.Cursor
}
