package debounce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// model is the reference: a list of open bursts and the fires they make,
// computed directly from the contract.
type model struct {
	cfg    Config
	limit  time.Duration // the end of time, after the start: deadlines saturate there
	now    time.Duration
	seq    int
	bursts map[string]*modelBurst
	quiet  map[string]time.Duration // when each key counts as quiet again; absent: quiet
	fires  []fired
}

type modelBurst struct {
	vals        []int
	first, last time.Duration
	wait        time.Duration // quiet period
	seq         int           // start order
	led         bool          // its first value fired at the leading edge
}

func newModel(cfg Config, start time.Time) *model {
	return &model{
		cfg:    cfg,
		limit:  time.Duration(math.MaxInt64 - start.UnixNano()),
		bursts: map[string]*modelBurst{},
		quiet:  map[string]time.Duration{},
	}
}

// after returns t+d, or the end of time if that is later.
func (m *model) after(t, d time.Duration) time.Duration {
	if d > m.limit-t {
		return m.limit
	}
	return t + d
}

func (m *model) deadline(b *modelBurst) time.Duration {
	d := m.after(b.last, b.wait)
	if m.cfg.MaxWait > 0 {
		d = min(d, m.after(b.first, m.cfg.MaxWait))
	}
	return d
}

func (m *model) emit(key string, b *modelBurst) {
	count := len(b.vals)
	if b.led {
		count++
	}
	m.fires = append(m.fires, fired{At: m.now, Key: key, Values: b.vals, First: b.first, Last: b.last, Count: count})
}

// add is Add: addWait with Config.Wait.
func (m *model) add(key string, v int) { m.addWait(key, v, m.cfg.Wait) }

// addWait opens a burst with quiet period wait, cut to MaxWait, if key has
// none; with Leading, the opening value fires at once only if the key was
// quiet: no Add for the quiet period of its last burst, or Cancel since.
func (m *model) addWait(key string, v int, wait time.Duration) {
	if m.cfg.MaxWait > 0 {
		wait = min(wait, m.cfg.MaxWait)
	}
	b := m.bursts[key]
	quiet, seen := m.quiet[key]
	if b == nil {
		m.seq++
		b = &modelBurst{first: m.now, last: m.now, wait: wait, seq: m.seq}
		m.bursts[key] = b
		m.quiet[key] = m.after(m.now, b.wait)
		if m.cfg.Leading && (!seen || quiet <= m.now) {
			b.led = true
			m.fires = append(m.fires, fired{At: m.now, Key: key, Values: []int{v}, First: m.now, Last: m.now, Count: 1})
			return
		}
	}
	b.vals = append(b.vals, v)
	b.last = m.now
	m.quiet[key] = m.after(m.now, b.wait)
	if m.cfg.MaxItems > 0 && len(b.vals) >= m.cfg.MaxItems {
		m.emit(key, b)
		delete(m.bursts, key)
	}
}

func (m *model) flush(key string) bool {
	b := m.bursts[key]
	delete(m.bursts, key)
	if b == nil || len(b.vals) == 0 {
		return false
	}
	m.emit(key, b)
	return true
}

// cancel discards key's burst and forgets its Adds.
func (m *model) cancel(key string) bool {
	_, ok := m.bursts[key]
	if ok {
		delete(m.bursts, key)
		delete(m.quiet, key)
	}
	return ok
}

// advance fires, in (deadline, start) order, every burst due by now+d.
func (m *model) advance(d time.Duration) {
	end := m.now + d
	for {
		var key string
		var next *modelBurst
		for k, b := range m.bursts {
			if next == nil || m.deadline(b) < m.deadline(next) ||
				(m.deadline(b) == m.deadline(next) && b.seq < next.seq) {
				key, next = k, b
			}
		}
		if next == nil || m.deadline(next) > end {
			break
		}
		m.now = m.deadline(next)
		delete(m.bursts, key)
		if len(next.vals) > 0 {
			m.emit(key, next)
		}
	}
	m.now = end
}

// close fires, with flush (Shutdown), every open burst that has values, in
// (deadline, start) order, and forgets the rest (Close).
func (m *model) close(flush bool) {
	var open []*modelBurst
	keyOf := map[*modelBurst]string{}
	for k, b := range m.bursts {
		if flush && len(b.vals) > 0 {
			open = append(open, b)
			keyOf[b] = k
		}
	}
	slices.SortFunc(open, func(a, b *modelBurst) int {
		if da, db := m.deadline(a), m.deadline(b); da != db {
			return int(da - db)
		}
		return a.seq - b.seq
	})
	for _, b := range open {
		m.emit(keyOf[b], b)
	}
	m.bursts = map[string]*modelBurst{}
}

// TestModel runs random Adds, Flushes, Cancels and steps of fake time, then
// a Shutdown or Close or a long wait, over a few keys on a coarse time grid,
// so that deadlines often tie, and checks every fire (key, values, times,
// order) and every result against the model. Each configuration runs with
// Add alone, and with AddWait mixed in, at quiet periods above and below
// Wait.
func TestModel(t *testing.T) {
	configs := []Config{
		{Wait: time.Second},
		{Wait: time.Second, MaxWait: 2500 * ms},
		{Wait: time.Second, MaxItems: 3},
		{Wait: time.Second, Leading: true},
		{Wait: time.Second, MaxWait: time.Second, Leading: true}, // a throttle
		{Wait: time.Second, MaxWait: time.Second, MaxItems: 4, Leading: true},
	}
	keys := []string{"a", "b", "c", "d", "e", "f"}
	waits := []time.Duration{300 * ms, 700 * ms, time.Second, 2500 * ms, 4 * time.Second}
	for ci, cfg := range configs {
		for _, mixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%+v/AddWait=%v", cfg, mixed), func(t *testing.T) {
				for seed := range uint64(40) {
					rng := rand.New(rand.NewPCG(seed, uint64(ci)))
					synctest.Test(t, func(t *testing.T) {
						r := newRecorder()
						k := newKeyed(t, cfg, r)
						defer closeKeyed(t, k)
						k.mu.Lock()
						k.chunk = []int{1, 2, 256}[rng.IntN(3)] // small chunks split rounds
						k.mu.Unlock()
						m := newModel(cfg, r.start)
						var log []string // operations, printed on failure
						for op := range 300 {
							key := keys[rng.IntN(len(keys))]
							switch n := rng.IntN(10); {
							case n < 5 && mixed && rng.IntN(2) == 0:
								w := waits[rng.IntN(len(waits))]
								log = append(log, fmt.Sprint("addWait ", key, " ", w))
								require.NoError(t, k.AddWait(key, op, w))
								m.addWait(key, op, w)
							case n < 5:
								log = append(log, "add "+key)
								require.NoError(t, k.Add(key, op))
								m.add(key, op)
							case n == 5:
								log = append(log, "flush "+key)
								require.Equal(t, m.flush(key), k.Flush(key), "%v", log)
							case n == 6:
								log = append(log, "cancel "+key)
								require.Equal(t, m.cancel(key), k.Cancel(key), "%v", log)
							default:
								d := time.Duration(rng.IntN(16)) * 100 * ms
								log = append(log, "sleep "+d.String())
								time.Sleep(d)
								m.advance(d)
							}
							synctest.Wait()
							require.Equal(t, len(m.bursts), k.Pending(), "%v", log)
						}
						if flush := rng.IntN(2) == 0; rng.IntN(2) == 0 {
							log = append(log, fmt.Sprint("close ", flush))
							if flush {
								require.NoError(t, k.Shutdown(t.Context()))
							} else {
								require.NoError(t, k.Close())
							}
							m.close(flush)
							require.ErrorIs(t, k.Add("a", -1), ErrClosed)
						} else {
							time.Sleep(time.Minute)
							m.advance(time.Minute)
							synctest.Wait()
							k.mu.Lock()
							left := len(k.entries) + len(k.ext) + k.fifo.len() + k.heap.Len()
							k.mu.Unlock()
							require.Zero(t, left, "state left behind: %v", log)
						}
						require.Equal(t, m.fires, r.take(), "%v", log)
						require.True(t, slices.IsSortedFunc(m.fires, func(a, b fired) int { return int(a.At - b.At) }))
					})
				}
			})
		}
	}
}
