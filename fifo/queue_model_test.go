package fifo

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	modelWaiting uint8 = 1 << iota
	modelProcessing
	modelDirty
)

// queueModel is the reference for Queue: plain slices and maps driven by one
// goroutine, with exact expected outputs.
type queueModel struct {
	ready   []int
	state   map[int]uint8
	delayed map[int][2]int64
	seq     int64
	now     int64
	shut    bool
}

func (m *queueModel) add(k int) bool {
	if m.shut {
		return false
	}
	s := m.state[k]
	switch {
	case s&modelWaiting != 0:
		return false
	case s&modelProcessing != 0:
		if s&modelDirty != 0 {
			return false
		}
		m.state[k] = s | modelDirty
	default:
		m.state[k] = s | modelWaiting
		m.ready = append(m.ready, k)
	}
	return true
}

func (m *queueModel) addAfter(k int, d time.Duration) {
	if d <= 0 {
		m.add(k)
		return
	}
	if m.shut {
		return
	}
	at := m.now + int64(d)
	if p, ok := m.delayed[k]; ok && p[0] <= at {
		return
	}
	m.seq++
	m.delayed[k] = [2]int64{at, m.seq}
}

func (m *queueModel) advance(d time.Duration) {
	m.now += int64(d)
	if m.shut {
		return
	}
	var due []int
	for k, p := range m.delayed {
		if p[0] <= m.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b int) int {
		pa, pb := m.delayed[a], m.delayed[b]
		return cmp.Or(cmp.Compare(pa[0], pb[0]), cmp.Compare(pa[1], pb[1]))
	})
	for _, k := range due {
		delete(m.delayed, k)
		m.add(k)
	}
}

func (m *queueModel) get() int {
	k := m.ready[0]
	m.ready = m.ready[1:]
	m.state[k] = modelProcessing | m.state[k]&modelDirty
	return k
}

func (m *queueModel) done(k int) {
	if m.state[k]&modelDirty != 0 {
		m.state[k] = modelWaiting
		m.ready = append(m.ready, k)
		return
	}
	delete(m.state, k)
}

func (m *queueModel) processing() []int {
	var keys []int
	for k, s := range m.state {
		if s&modelProcessing != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestQueueModel runs random operation sequences, including delayed adds
// on fake time and a shutdown part-way, and compares every result with
// queueModel.
func TestQueueModel(t *testing.T) {
	for seed := range uint64(40) {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			q := NewQueue[int](QueueConfig{})
			defer q.ShutDown()
			m := &queueModel{state: map[int]uint8{}, delayed: map[int][2]int64{}}
			for step := range 400 {
				k := rng.IntN(6)
				switch op := rng.IntN(100); {
				case op < 30:
					require.Equal(t, m.add(k), q.Add(k), "step %d: Add(%d)", step, k)
				case op < 42:
					d := time.Duration(rng.IntN(4)) * time.Second
					q.AddAfter(k, d)
					m.addAfter(k, d)
				case op < 50:
					d := time.Duration(rng.IntN(3000)) * time.Millisecond
					time.Sleep(d)
					synctest.Wait()
					m.advance(d)
				case op < 75:
					checkQueueGet(t, q, m, step)
				case op < 99:
					if p := m.processing(); len(p) > 0 {
						k := p[rng.IntN(len(p))]
						q.Done(k)
						m.done(k)
					}
				default:
					if step > 200 {
						q.ShutDown()
						m.shut = true
					}
				}
				require.Equal(t, len(m.ready), q.Len(), "step %d: Len", step)
				require.Equal(t, len(m.processing()), q.Processing(), "step %d: Processing", step)
			}
		})
	}
}

// checkQueueGet calls Get when the model has a key ready; otherwise it
// checks that Get returns ErrClosed after shutdown, or blocks until its
// context is cancelled.
func checkQueueGet(t *testing.T, q *Queue[int], m *queueModel, step int) {
	t.Helper()
	if len(m.ready) > 0 {
		k, err := q.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, m.get(), k, "step %d: Get", step)
		return
	}
	if m.shut {
		_, err := q.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed, "step %d", step)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.Get(ctx)
		errc <- err
	}()
	synctest.Wait()
	select {
	case err := <-errc:
		t.Fatalf("step %d: Get returned %v on an empty queue", step, err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
}
