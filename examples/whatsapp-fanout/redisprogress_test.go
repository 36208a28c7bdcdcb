package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The progress in Redis goes from holder to holder of the account lock: a
// holder reads it where the last one left it, and from then on Redis
// refuses the writes of any earlier holder, whose lock was lost.
func TestRedisProgressFence(t *testing.T) {
	client, prefix := redisForTest(t)
	ctx := t.Context()
	be := newRedisProgress(client, prefix)
	r := instanceReminder("r", "x", 3)

	p, err := be.load(ctx, []reminder{r})
	require.NoError(t, err)
	require.Len(t, p.Reminders, 1)
	again, err := be.load(ctx, []reminder{r, r})
	require.NoError(t, err)
	require.Len(t, again.Reminders, 1, "a reminder is added once")

	// The first holder, fence 5, sends a part and writes it.
	rs, err := be.claim(ctx, "r", 5)
	require.NoError(t, err)
	require.Equal(t, groupPending, rs.Groups[0].Status)
	rs.Groups[0].Parts = 1
	refused, err := be.write(ctx, []record{{I: 0, ID: "r", Data: mustJSON(t, rs), Fence: 5, Changed: true}})
	require.NoError(t, err)
	require.Empty(t, refused)

	// Its lock lapses; the next holder, fence 7, reads that part.
	next, err := be.claim(ctx, "r", 7)
	require.NoError(t, err)
	require.Equal(t, 1, next.Groups[0].Parts)

	// The first holder's later write is refused, and so is its claim.
	rs.Groups[0].Parts = 2
	refused, err = be.write(ctx, []record{{I: 0, ID: "r", Data: mustJSON(t, rs), Fence: 5, Changed: true}})
	require.NoError(t, err)
	require.Equal(t, []int{0}, refused)
	_, err = be.claim(ctx, "r", 5)
	require.ErrorIs(t, err, errTakenOver)
	stored, err := be.claim(ctx, "r", 7)
	require.NoError(t, err)
	require.Equal(t, 1, stored.Groups[0].Parts, "the refused write changed nothing")

	// Through a store: flush says the reminder was taken over.
	st, err := openStore(ctx, be, nil, nil, 0)
	require.NoError(t, err)
	require.NoError(t, st.claim(ctx, 0, 7))
	_, err = be.claim(ctx, "r", 8)
	require.NoError(t, err)
	st.update(0, func(rs *reminderState) { rs.Groups[1].Parts = 1 })
	require.ErrorIs(t, st.flush(ctx, 0), errTakenOver)
	require.NoError(t, st.Close())
	stored, err = be.claim(ctx, "r", 8)
	require.NoError(t, err)
	require.Zero(t, stored.Groups[1].Parts)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
