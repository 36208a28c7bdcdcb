package debounce

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

var benchKeys = []int{1, 1_000_000}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// cpuMeter reports the process's CPU time per operation as cpu-ns/op: on a
// shared machine, ns/op counts the time other processes hold the CPU too.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	t, ok := cpuTime()
	return cpuMeter{t, ok}
}

func (m cpuMeter) report(b *testing.B) {
	if t, ok := cpuTime(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(t-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkKeyedAdd measures Add on keys that already have an open burst,
// and, as B/key, the heap each open burst holds. Wait is long so nothing
// fires.
func BenchmarkKeyedAdd(b *testing.B) {
	for _, keys := range benchKeys {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			k, err := New(Config{Wait: time.Hour}, func(int, Burst[struct{}]) {})
			if err != nil {
				b.Fatal(err)
			}
			before := heapAlloc()
			for i := range keys {
				_ = k.Add(i, struct{}{})
			}
			perKey := float64(heapAlloc()-before) / float64(keys)
			b.ReportAllocs()
			i := 0
			cpu := startCPU()
			for b.Loop() {
				_ = k.Add(i, struct{}{})
				if i++; i == keys {
					i = 0
				}
			}
			b.StopTimer()
			cpu.report(b)
			if keys > 1 { // reported after b.Loop, which clears metrics
				b.ReportMetric(perKey, "B/key")
			}
			_ = k.Close()
		})
	}
}

// timerMap is the plain approach BenchmarkKeyedAdd is compared with: a
// *time.Timer per key, stopped and replaced on every event.
type timerMap struct {
	mu     sync.Mutex
	timers map[int]*time.Timer
}

func (m *timerMap) add(key int, wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.timers[key]; t != nil {
		t.Stop()
	}
	m.timers[key] = time.AfterFunc(wait, func() {
		m.mu.Lock()
		delete(m.timers, key)
		m.mu.Unlock()
	})
}

func BenchmarkTimerMapAdd(b *testing.B) {
	for _, keys := range benchKeys {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			m := &timerMap{timers: make(map[int]*time.Timer)}
			before := heapAlloc()
			for i := range keys {
				m.add(i, time.Hour)
			}
			perKey := float64(heapAlloc()-before) / float64(keys)
			b.ReportAllocs()
			i := 0
			cpu := startCPU()
			for b.Loop() {
				m.add(i, time.Hour)
				if i++; i == keys {
					i = 0
				}
			}
			b.StopTimer()
			cpu.report(b)
			if keys > 1 { // reported after b.Loop, which clears metrics
				b.ReportMetric(perKey, "B/key")
			}
			m.mu.Lock()
			for _, t := range m.timers {
				t.Stop()
			}
			m.mu.Unlock()
		})
	}
}

// BenchmarkTimeNow is the cost of reading the clock, for reference: Add
// reads it once.
func BenchmarkTimeNow(b *testing.B) {
	cpu := startCPU()
	for b.Loop() {
		_ = time.Now()
	}
	cpu.report(b)
}

const (
	latenessKeys = 100_000
	latenessWait = 200 * time.Millisecond
	latenessSpan = 100 * time.Millisecond
)

// BenchmarkFireLateness schedules 100,000 keys due within the same 100 ms
// on the real clock and reports how late fire runs after each deadline.
func BenchmarkFireLateness(b *testing.B) {
	var all []time.Duration
	for b.Loop() {
		late := make([]time.Duration, 0, latenessKeys)
		done := make(chan struct{})
		k, err := New(Config{Wait: latenessWait}, func(_ int, bu Burst[struct{}]) {
			late = append(late, time.Since(bu.Last.Add(latenessWait)))
			if len(late) == latenessKeys {
				close(done)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		addPaced(func(i int) { _ = k.Add(i, struct{}{}) })
		<-done
		_ = k.Close()
		all = append(all, late...)
	}
	reportLateness(b, all)
}

// BenchmarkTimerMapLateness is BenchmarkFireLateness for the plain
// approach, a time.AfterFunc per key, as a reference on the same machine.
func BenchmarkTimerMapLateness(b *testing.B) {
	var all []time.Duration
	for b.Loop() {
		var mu sync.Mutex
		late := make([]time.Duration, 0, latenessKeys)
		done := make(chan struct{})
		addPaced(func(i int) {
			due := time.Now().Add(latenessWait)
			time.AfterFunc(latenessWait, func() {
				mu.Lock()
				defer mu.Unlock()
				late = append(late, time.Since(due))
				if len(late) == latenessKeys {
					close(done)
				}
			})
		})
		<-done
		all = append(all, late...)
	}
	reportLateness(b, all)
}

// BenchmarkTimerWakeup is the floor under the lateness benchmarks: how late
// one time.Timer, reset to a short wait again and again, wakes its
// goroutine. No timer-driven fire can be more punctual than this.
func BenchmarkTimerWakeup(b *testing.B) {
	const wait = 100 * time.Microsecond
	var all []time.Duration
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for b.Loop() {
		start := time.Now()
		t.Reset(wait)
		<-t.C
		all = append(all, time.Since(start)-wait)
	}
	reportLateness(b, all)
}

// addPaced calls add for latenessKeys keys spread evenly over latenessSpan.
func addPaced(add func(i int)) {
	const step = 1000
	start := time.Now()
	for i := range latenessKeys {
		if i%step == 0 {
			time.Sleep(time.Until(start.Add(latenessSpan * time.Duration(i) / latenessKeys)))
		}
		add(i)
	}
}

func reportLateness(b *testing.B, all []time.Duration) {
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2]), "p50-ns")
	b.ReportMetric(float64(all[len(all)*99/100]), "p99-ns")
}
