package console_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

func TestQueuePageLoadsItsCountsAfterIt(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1", "a2")
	f.add("jobs", "bob", "b1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: "gone"})

	shell := f.page("/queue?queue=jobs&state=ready&prefix=b")
	assert.Contains(t, shell, `<div id="counts" class="counts" data-src="/pacer/counts?queue=jobs" aria-busy="true" aria-live="polite">`)
	assert.Contains(t, shell, `<dl class="stats loading" aria-label="Loading the counts">`)
	assert.Contains(t, shell, `<div><dt>Keys</dt><dd><span class="wait">…</span></dd></div>`, "the cards are there, waiting")
	assert.Contains(t, shell, `<noscript><p class="counts-note">Counting may read every key of the queue: <a href="/pacer/queue?counts=inline&amp;prefix=b&amp;queue=jobs&amp;state=ready">count them</a>.</p></noscript>`,
		"a browser without scripts is offered the same page with its counts")
	assert.Contains(t, shell, ">bob<", "the page of keys is there at once")

	counts := f.page("/counts?queue=jobs")
	assert.NotContains(t, counts, "<html", "the fragment holds the panel alone")
	assert.NotContains(t, counts, "loading")
	assert.Contains(t, counts, `<div><dt>Keys</dt><dd>1</dd></div>`)
	assert.Contains(t, counts, `<div><dt>Values</dt><dd>1</dd></div>`)
	assert.Contains(t, counts, `<div><dt>Dead letters</dt><dd><a href="/pacer/dead?queue=jobs">1</a></dd></div>`)

	inline := f.page("/queue?queue=jobs&counts=inline")
	assert.NotContains(t, inline, "data-src=", "nothing is left to load")
	assert.NotContains(t, inline, "<noscript>")
	assert.Contains(t, inline, `<div><dt>Keys</dt><dd>1</dd></div>`)
	assert.Contains(t, inline, ">bob<")

	status, body := f.get("/counts")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "lacks its queue parameter")
}

// failingStats is a Memory whose Stats fails.
type failingStats struct{ *store.Memory }

var errStats = errors.New("stats: connection refused")

func (failingStats) Stats(context.Context, string) (store.Stats, error) {
	return store.Stats{}, errStats
}

func TestCountsThatFailSayWhy(t *testing.T) {
	f := setup(t, func(f *fixture, cfg *console.Config) { cfg.Store = failingStats{f.mem} })
	f.add("jobs", "alice", "a1")

	assert.Contains(t, f.page("/queue?queue=jobs"), ">alice<", "the page does not wait for the counts")
	status, body := f.get("/counts?queue=jobs")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Equal(t, `<p class="error" role="alert">The store&#39;s Stats failed: stats: connection refused</p>`, strings.TrimSpace(body))

	status, body = f.get("/queue?queue=jobs&counts=inline")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Contains(t, body, "stats: connection refused")
}

func TestQueuePageShowsThePauseWithoutCounting(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	_, err := f.mem.PauseQueue(context.Background(), "jobs")
	require.NoError(t, err)
	body := f.page("/queue?queue=jobs")
	assert.Contains(t, body, `<h1>jobs <span class="badge s-paused">paused</span></h1>`)
	assert.True(t, hasButton(body, console.ResumeQueue))
	assert.False(t, hasButton(body, console.PauseQueue))
}
