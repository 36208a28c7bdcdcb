package fifo

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkQueueCycle measures one Add, Get and Done of a fresh key.
func BenchmarkQueueCycle(b *testing.B) {
	q := NewQueue[int](QueueConfig{})
	defer q.ShutDown()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Add(i)
		k, err := q.Get(ctx)
		if err != nil {
			b.Fatal(err)
		}
		q.Done(k)
	}
}

// BenchmarkGroupsCycle measures one Put, Get and Ack of a message under a
// fresh key.
func BenchmarkGroupsCycle(b *testing.B) {
	g, err := NewGroups[int, int](GroupsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.ShutDown()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := g.Put(i, i); err != nil {
			b.Fatal(err)
		}
		l, err := g.Get(ctx)
		if err != nil {
			b.Fatal(err)
		}
		g.Ack(l)
	}
}

// BenchmarkQueueParallel runs Add+Get+Done cycles from GOMAXPROCS
// goroutines at once on one Queue.
func BenchmarkQueueParallel(b *testing.B) {
	q := NewQueue[int64](QueueConfig{})
	defer q.ShutDown()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			q.Add(next.Add(1))
			k, err := q.Get(ctx)
			if err != nil {
				panic(err)
			}
			q.Done(k)
		}
	})
}

// BenchmarkGroupsParallel runs Put+Get+Ack cycles from GOMAXPROCS
// goroutines at once on one Groups.
func BenchmarkGroupsParallel(b *testing.B) {
	g, err := NewGroups[int64, int](GroupsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.ShutDown()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := g.Put(next.Add(1), 1); err != nil {
				panic(err)
			}
			l, err := g.Get(ctx)
			if err != nil {
				panic(err)
			}
			g.Ack(l)
		}
	})
}

// naiveQueue is the textbook layout of a de-duplicated work queue, kept
// here only as a yardstick for BenchmarkQueueCycle: a slice that is
// shifted on every Get, a set per state, and a sync.Cond.
type naiveQueue struct {
	mu                sync.Mutex
	cond              sync.Cond
	queue             []int
	dirty, processing map[int]struct{}
}

func (q *naiveQueue) add(k int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.dirty[k]; ok {
		return
	}
	q.dirty[k] = struct{}{}
	if _, ok := q.processing[k]; ok {
		return
	}
	q.queue = append(q.queue, k)
	q.cond.Signal()
}

func (q *naiveQueue) get() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 {
		q.cond.Wait()
	}
	k := q.queue[0]
	q.queue = q.queue[1:]
	q.processing[k] = struct{}{}
	delete(q.dirty, k)
	return k
}

func (q *naiveQueue) done(k int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, k)
	if _, ok := q.dirty[k]; ok {
		q.queue = append(q.queue, k)
		q.cond.Signal()
	}
}

// BenchmarkNaiveQueueCycle is BenchmarkQueueCycle on naiveQueue.
func BenchmarkNaiveQueueCycle(b *testing.B) {
	q := &naiveQueue{dirty: map[int]struct{}{}, processing: map[int]struct{}{}}
	q.cond.L = &q.mu
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.add(i)
		q.done(q.get())
	}
}
