package console_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// view is a pacer.RunnerView of a queue whose keys and values it shows
// in upper case.
type view struct {
	queue string
	st    store.Store
}

func (v view) Queue() string      { return v.queue }
func (v view) Store() store.Store { return v.st }
func (v view) Explain(_ context.Context, key string) (pacer.Explanation, error) {
	return pacer.Explanation{}, errors.New("the view explains nothing about " + key)
}
func (v view) FormatKey(k string) string   { return "K:" + strings.ToUpper(k) }
func (v view) FormatValue(b []byte) string { return "V:" + strings.ToUpper(string(b)) }

func TestNewValidates(t *testing.T) {
	mem := store.NewMemory(store.MemoryConfig{})
	for _, tc := range []struct {
		cfg  console.Config
		want string
	}{
		{console.Config{}, "Config.Store is nil"},
		{console.Config{Store: mem, CSRFKey: []byte("short")}, "Config.CSRFKey has 5 bytes, want at least 32"},
		{console.Config{Store: mem, Runners: []pacer.RunnerView{nil}}, "Config.Runners[0] is nil"},
		{console.Config{Store: mem, Runners: []pacer.RunnerView{view{queue: "q"}}}, `Config.Runners[0] (queue "q") keeps its state in its process`},
		{console.Config{Store: mem, Runners: []pacer.RunnerView{view{"a", mem}, view{"q", mem}, view{"q", mem}}}, `Config.Runners[1] and Config.Runners[2] both have queue "q"`},
	} {
		_, err := console.New(tc.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.True(t, strings.HasPrefix(err.Error(), "console: "), err.Error())
	}
	h, err := console.New(console.Config{Store: mem})
	require.NoError(t, err)
	assert.NotNil(t, h)
}

func TestRunnerViewFormats(t *testing.T) {
	f := setup(t, func(f *fixture, cfg *console.Config) {
		cfg.Runners = []pacer.RunnerView{view{"orders", f.mem}, view{"idle", f.mem}}
	})
	f.add("orders", "alice", "first order")
	f.add("raw", "bob", "plain")

	over := f.page("/")
	assert.Equal(t, []string{"idle runner", "0", "0", "0", "0", "0", "0", "0", "0", "0", "—"}, cells(row(t, over, ">idle<")), "a Runner's queue is listed while it holds nothing")
	assert.Contains(t, row(t, over, ">orders<"), ">runner<")
	assert.NotContains(t, row(t, over, ">raw<"), ">runner<")

	assert.Contains(t, f.page("/queue?queue=orders"), `<span class="k">K:ALICE</span>`)
	key := f.page("/key?queue=orders&key=alice")
	assert.Contains(t, key, "<pre>V:FIRST ORDER</pre>")
	assert.Contains(t, key, "decoded · 11 B")
	assert.Contains(t, key, "Could not explain the key: the view explains nothing about alice", "the Runner's Explain")

	raw := f.page("/key?queue=raw&key=bob")
	assert.Contains(t, raw, "<pre>plain</pre>", "other queues show raw")
	assert.Contains(t, raw, `<span class="k">bob</span>`)
}

// bare hides every optional interface of a store.
type bare struct{ store.Store }

func TestStoreWithoutOptionalInterfaces(t *testing.T) {
	f := setup(t, func(f *fixture, cfg *console.Config) {
		cfg.Store = bare{f.mem}
		cfg.Runners = []pacer.RunnerView{view{"orders", f.mem}}
	})
	f.add("orders", "alice", "a1")
	f.add("hidden", "bob", "b1")

	over := f.page("/")
	assert.Contains(t, over, "This store does not implement store.Inspector: only the queues of the console&#39;s Runners are listed.")
	assert.Equal(t, []string{"orders runner", "1", "1", "1", "0", "0", "0", "0", "0", "0", "—"}, cells(row(t, over, ">orders<")), "from Stats")
	assert.NotContains(t, over, ">hidden<")

	q := f.page("/queue?queue=orders")
	assert.Contains(t, q, "does not implement store.Inspector: its keys cannot be listed.")
	assert.Contains(t, q, "does not implement store.Operator: it cannot be paused.")
	assert.False(t, hasButton(q, console.PauseQueue))

	d := f.page("/dead?queue=orders")
	assert.Contains(t, d, "does not implement store.DeadLetters")
	assert.False(t, hasButton(d, console.Purge))

	k := f.page("/key?queue=orders&key=alice")
	assert.Contains(t, k, "the key&#39;s state and values cannot be read")

	status, _ := f.get("/confirm?do=pause-queue&queue=orders")
	assert.Equal(t, 200, status, "a confirmation reads nothing")
	body := f.do("/pacer/confirm?do=pause-queue&queue=orders", nil)
	assert.Equal(t, "error: Pause queue: this store does not implement store.Operator.", flash(body))
}

// counting records the bounds of the store calls the pages make.
type counting struct {
	*store.Memory
	mu    sync.Mutex
	calls []string
}

func (c *counting) record(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *counting) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func (c *counting) Queues(ctx context.Context) ([]store.QueueInfo, error) {
	c.record("Queues")
	return c.Memory.Queues(ctx)
}

func (c *counting) Stats(ctx context.Context, q string) (store.Stats, error) {
	c.record("Stats")
	return c.Memory.Stats(ctx, q)
}

func (c *counting) Keys(ctx context.Context, q string, kq store.KeyQuery) (store.KeyPage, error) {
	c.record(fmt.Sprintf("Keys(%d)", kq.Limit))
	return c.Memory.Keys(ctx, q, kq)
}

func (c *counting) Key(ctx context.Context, q, k string) (store.KeyInfo, bool, error) {
	c.record("Key")
	return c.Memory.Key(ctx, q, k)
}

func (c *counting) Values(ctx context.Context, q, k string, limit int) ([]store.StoredValue, error) {
	c.record(fmt.Sprintf("Values(%d)", limit))
	return c.Memory.Values(ctx, q, k, limit)
}

func (c *counting) DeadLetters(ctx context.Context, q string, after uint64, limit int) ([]store.DeadLetter, error) {
	c.record(fmt.Sprintf("DeadLetters(%d)", limit))
	return c.Memory.DeadLetters(ctx, q, after, limit)
}

func TestPagesReadBoundedPages(t *testing.T) {
	var cs *counting
	f := setup(t, func(f *fixture, cfg *console.Config) {
		cs = &counting{Memory: f.mem}
		cfg.Store = cs
	})
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop})
	f.add("jobs", "alice", "a2")

	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"Queues"}},
		{"/queues", []string{"Queues"}},
		{"/queue?queue=jobs", []string{"Stats", "Keys(50)"}},
		{"/queue?queue=jobs&limit=1000", []string{"Stats", "Keys(100)"}},
		{"/queue?queue=jobs&limit=10", []string{"Stats", "Keys(10)"}},
		{"/dead?queue=jobs", []string{"DeadLetters(50)"}},
		{"/confirm?do=pause-queue&queue=jobs", nil},
	} {
		f.page(tc.path)
		assert.Equal(t, tc.want, cs.take(), tc.path)
	}
	f.page("/key?queue=jobs&key=alice")
	calls := cs.take()
	require.GreaterOrEqual(t, len(calls), 2)
	assert.Equal(t, []string{"Key", "Values(20)"}, calls[:2], "then the explanation's own reads")
	for _, c := range calls[2:] {
		assert.NotContains(t, c, "Keys(", "the explanation reads no page of keys")
	}
}
