package fifo

import (
	"context"
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
