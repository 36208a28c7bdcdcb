package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// These tests seed a store as the programs in examples/ do, with a pacer
// Runner of the same configuration (queue name, key and value types), and
// list it with pacer, as an operator of those programs would.

// nextupEvent is the value of examples/notion-nextup: a task event,
// stored with pacer's JSON codec.
type nextupEvent struct {
	ID       string    `json:"id,omitempty"`
	Type     string    `json:"type"`
	TaskID   string    `json:"task_id"`
	Assignee string    `json:"assignee"`
	At       time.Time `json:"received_at,omitzero"`
}

// TestNotionNextup lists what examples/notion-nextup keeps with -redis:
// queue "nextup" under its -redis-prefix ("nextup" by default; one of the
// test's own here), keyed by assignee, each user's edits debouncing.
func TestNotionNextup(t *testing.T) {
	e := redisEngineWithPrefix(t, "nextup-"+token())
	ctx := t.Context()
	r, err := pacer.New(pacer.Config[string, nextupEvent]{
		Store: e.st, Name: "nextup", Debounce: time.Hour, MaxWait: 2 * time.Hour,
	}, func(context.Context, string, []nextupEvent) error { return nil })
	require.NoError(t, err)
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	require.NoError(t, r.Add(ctx, "ada", nextupEvent{ID: "ev1", Type: "task.updated", TaskID: "t1", Assignee: "ada", At: at}))
	require.NoError(t, r.Add(ctx, "ada", nextupEvent{ID: "ev2", Type: "task.updated", TaskID: "t2", Assignee: "ada", At: at}))
	require.NoError(t, r.Add(ctx, "grace", nextupEvent{ID: "ev3", Type: "task.created", TaskID: "t3", Assignee: "grace", At: at}))
	require.NoError(t, r.Shutdown(ctx))

	rs := rows(t, ok(t, e.with("queues")...))
	require.Len(t, rs, 1)
	// QUEUE STATE KEYS VALUES READY DEBOUNCING
	assert.Equal(t, []string{"nextup", "running", "2", "3", "0", "2"}, rs[0][:6])
	rs = rows(t, ok(t, e.with("keys", "nextup", "-state", "debouncing")...))
	require.Len(t, rs, 2)
	assert.Equal(t, []string{"ada", "debouncing", "2"}, rs[0][:3])
	assert.Equal(t, []string{"grace", "debouncing", "1"}, rs[1][:3])
	rs = rows(t, ok(t, e.with("values", "nextup", "ada")...))
	require.Len(t, rs, 2)
	assert.Equal(t, []string{"json", `{"id":"ev1","type":"task.updated","task_id":"t1","assignee":"ada","received_at":"2026-05-01T10:00:00Z"}`}, rs[0][2:])

	var vals []store.StoredValue
	require.NoError(t, json.Unmarshal([]byte(ok(t, e.with("values", "nextup", "grace", "-json")...)), &vals))
	require.Len(t, vals, 1)
	var ev nextupEvent
	require.NoError(t, json.Unmarshal(vals[0].Value, &ev))
	assert.Equal(t, nextupEvent{ID: "ev3", Type: "task.created", TaskID: "t3", Assignee: "grace", At: at}, ev)
}

// hookMessage is the value of examples/hook0-fifo: one event on its way
// to one subscription.
type hookMessage struct {
	Sub   string `json:"sub"`
	Seq   uint64 `json:"seq"`
	Event struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"event"`
	Published time.Time `json:"published"`
}

// TestHook0FIFO lists what examples/hook0-fifo keeps with -postgres: its
// two queues in its -schema ("hook0_fifo" by default; one of the test's
// own here), "hook0-fifo" keyed by subscription and "hook0-concurrent"
// keyed by subscription#sequence, and the dead letter of a delivery that
// gave up.
func TestHook0FIFO(t *testing.T) {
	e := postgresEngineWithSchema(t, "hook0_fifo_"+token())
	ctx := t.Context()
	runner := func(name string) *pacer.Runner[string, hookMessage] {
		r, err := pacer.New(pacer.Config[string, hookMessage]{Store: e.st, Name: name, MaxBatch: 1},
			func(context.Context, string, []hookMessage) error { return nil })
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
		return r
	}
	fifo, conc := runner("hook0-fifo"), runner("hook0-concurrent")
	msg := func(sub string, seq uint64) hookMessage {
		m := hookMessage{Sub: sub, Seq: seq, Published: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
		m.Event.ID, m.Event.Type = "evt_"+itoa(int(seq)), "order.paid"
		return m
	}
	for seq := uint64(1); seq <= 3; seq++ {
		require.NoError(t, fifo.Add(ctx, "billing", msg("billing", seq)))
	}
	require.NoError(t, conc.Add(ctx, "audit#1", msg("audit", 1)))
	require.NoError(t, conc.Add(ctx, "audit#2", msg("audit", 2)))
	// A delivery that gave up, as the dispatcher's pacer.Permanent leaves it.
	ls, _, err := e.st.Claim(ctx, "hook0-concurrent", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	_, err = e.st.Finish(ctx, ls[0], store.Outcome{Kind: store.Drop, Err: "HTTP 410 Gone"})
	require.NoError(t, err)

	rs := rows(t, ok(t, e.with("queues")...))
	require.Len(t, rs, 2)
	// QUEUE STATE KEYS VALUES READY DEBOUNCING LEASED RETRYING HELD PAUSED-KEYS DEAD
	assert.Equal(t, []string{"hook0-concurrent", "running", "1", "1", "1", "0", "0", "0", "0", "0", "1"}, rs[0][:11])
	assert.Equal(t, []string{"hook0-fifo", "running", "1", "3", "1", "0", "0", "0", "0", "0", "0"}, rs[1][:11])
	rs = rows(t, ok(t, e.with("values", "hook0-fifo", "billing")...))
	require.Len(t, rs, 3)
	for i, r := range rs {
		var m hookMessage
		require.Equal(t, "json", r[2])
		require.NoError(t, json.Unmarshal([]byte(r[3]), &m))
		assert.Equal(t, msg("billing", uint64(i+1)), m)
	}
	rs = rows(t, ok(t, e.with("dead", "hook0-concurrent")...))
	require.Len(t, rs, 1)
	assert.Equal(t, ls[0].Key, rs[0][2])
	assert.Equal(t, "HTTP 410 Gone", rs[0][6])
}
