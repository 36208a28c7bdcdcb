package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/internal/pagetime"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// TestMeasureConsolePages renders every page of the console over a queue
// of 10^6 keys, 20 times each, and prints each page's p50, p90 and
// slowest render, handler and store calls together. Keys are
// "tenant-TTT/key-NNNNNNN", tenant N modulo 1000; one in ten debounces,
// the others are ready, but for 50 held keys and 50 dropped to dead
// letters. The key page is timed twice: with pacer.ExplainStored, and
// with the explanation of a Runner of the queue (which the queue's pause
// keeps from leasing). The target is 300 ms a page.
func TestMeasureConsolePages(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "console"})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	const n, q = 1_000_000, "big"

	t0 := time.Now()
	val := []byte(`{"id":1,"kind":"invoice"}`)
	// The first through the Store, which lists the queue in its registry;
	// the rest pipelined.
	require.NoError(t, s.Add(ctx, q, "tenant-000/key-0000000", [][]byte{val}, store.AddParams{Wait: time.Hour}))
	pipe := c.Pipeline()
	for i := 1; i < n; i++ {
		var wait int64
		if i%10 == 0 {
			wait = int64(time.Hour / time.Microsecond)
		}
		pipe.Do(ctx, redisstore.AddCommand("console", q, fmt.Sprintf("tenant-%03d/key-%07d", i%1000, i), val, wait)...)
		if pipe.Len() == 10000 || i == n-1 {
			_, err := pipe.Exec(ctx)
			require.NoError(t, err)
		}
	}
	holdAndDrop(t, s, q, 100)
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, n-50, st.Keys) // the dropped keys hold nothing
	require.Equal(t, 50, st.Held)
	fmt.Printf("console pages over redisstore: %d keys added in %v\n", st.Keys, time.Since(t0).Round(time.Millisecond))

	allow := func(*http.Request, console.Action) error { return nil }
	h, err := console.New(console.Config{Store: s, Authorize: allow})
	require.NoError(t, err)
	worst := pagetime.Table(t, os.Stdout, h, pagetime.Pages(q, "tenant-042/key-0500042", "tenant-042/"), 20)

	_, err = s.PauseQueue(ctx, q)
	require.NoError(t, err)
	r, err := pacer.New(pacer.Config[string, map[string]any]{Store: s, Name: q},
		func(context.Context, string, []map[string]any) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background())
	h, err = console.New(console.Config{Store: s, Runners: []pacer.RunnerView{r.View()}, Authorize: allow})
	require.NoError(t, err)
	worst = max(worst, pagetime.Table(t, os.Stdout, h, []pagetime.Page{
		{Name: "key, the Runner's explanation", Path: "/key?queue=" + q + "&key=tenant-042/key-0500042"},
	}, 20))
	fmt.Printf("the slowest p90: %.1f ms\n", float64(worst)/float64(time.Millisecond))
}

// holdAndDrop claims the first n ready keys of queue one at a time and
// holds every other one, dropping the rest to dead letters.
func holdAndDrop(t *testing.T, s store.Store, queue string, n int) {
	t.Helper()
	for i := range n {
		ls, _, err := s.Claim(context.Background(), queue, store.ClaimParams{Keys: 1, TTL: time.Hour})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		kind := store.Hold
		if i%2 == 0 {
			kind = store.Drop
		}
		_, err = s.Finish(context.Background(), ls[0], store.Outcome{Kind: kind, Err: "measurement"})
		require.NoError(t, err)
	}
}
