package fifo

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

func mustGet[K comparable](t *testing.T, q *Queue[K]) K {
	t.Helper()
	k, err := q.Get(context.Background())
	require.NoError(t, err)
	return k
}

func TestQueueDeduplicates(t *testing.T) {
	q := NewQueue[string](QueueConfig{})
	defer q.ShutDown()
	require.True(t, q.Add("a"))
	require.False(t, q.Add("a"))
	require.True(t, q.Add("b"))
	require.Equal(t, 2, q.Len())
	require.Equal(t, "a", mustGet(t, q))
	require.Equal(t, "b", mustGet(t, q))
	require.Equal(t, 0, q.Len())
	require.Equal(t, 2, q.Processing())
}

// TestQueueRerunGoesToTail is the per-user recompute case: an event that
// arrives while a user is processed makes the user run again afterwards,
// behind the users that were already waiting; without such an event the
// user does not run again.
func TestQueueRerunGoesToTail(t *testing.T) {
	q := NewQueue[string](QueueConfig{})
	defer q.ShutDown()
	q.Add("U1")
	q.Add("U2")
	require.Equal(t, "U1", mustGet(t, q))
	require.True(t, q.Add("U1"), "a processing key is marked dirty")
	require.False(t, q.Add("U1"), "already dirty")
	require.False(t, q.Add("U2"), "already waiting")
	require.Equal(t, 1, q.Len(), "a dirty key is not waiting yet")
	q.Done("U1")
	require.Equal(t, "U2", mustGet(t, q))
	require.Equal(t, "U1", mustGet(t, q))
	q.Done("U1")
	q.Done("U2")
	require.Equal(t, 0, q.Len())
	require.Equal(t, 0, q.Processing())

	q.Add("U2")
	q.Add("U1")
	require.Equal(t, "U2", mustGet(t, q))
	q.Done("U2") // no event during processing: U2 does not come back
	require.Equal(t, "U1", mustGet(t, q))
	require.Equal(t, 0, q.Len())
	q.Done("U1")
}

func TestQueueDonePanicsOnKeyNotProcessing(t *testing.T) {
	q := NewQueue[int](QueueConfig{})
	defer q.ShutDown()
	require.PanicsWithValue(t, "fifo: Queue.Done of a key that is not processing", func() { q.Done(1) })
	q.Add(1)
	require.PanicsWithValue(t, "fifo: Queue.Done of a key that is not processing", func() { q.Done(1) })
	mustGet(t, q)
	q.Done(1)
	require.Panics(t, func() { q.Done(1) })
}

func TestQueueGetHonoursContext(t *testing.T) {
	q := NewQueue[int](QueueConfig{})
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q.Add(1)
	_, err := q.Get(ctx)
	require.ErrorIs(t, err, context.Canceled, "a done context wins over a ready key")
	require.Equal(t, 1, q.Len(), "state unchanged")
}

// TestQueueCancelledWaiterPassesWakeUp checks a key is not stranded when
// the waiter it woke gives up at the same moment.
func TestQueueCancelledWaiterPassesWakeUp(t *testing.T) {
	for range 20 { // the woken waiter sees either its wake-up or ctx first
		testCancelledWaiterPassesWakeUp(t)
	}
}

func testCancelledWaiterPassesWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](QueueConfig{})
		defer q.ShutDown()
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, err := q.Get(ctx)
			first <- err
		}()
		synctest.Wait()
		second := make(chan int, 1)
		go func() { second <- mustGet(t, q) }()
		synctest.Wait()
		// Wake the first waiter and cancel it before it can run.
		q.mu.Lock()
		q.add(7)
		cancel()
		q.mu.Unlock()
		err := <-first
		if err == nil {
			// It saw the key before the cancellation: fine, but then
			// the second one must still be waiting.
			q.Add(8)
			require.Equal(t, 8, <-second)
			return
		}
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 7, <-second)
	})
}

// TestQueueAddAfter checks delayed adds fire at their deadline on fake
// time, in deadline order, and that the earlier of two deadlines wins.
func TestQueueAddAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[string](QueueConfig{})
		start := time.Now()
		q.AddAfter("a", 5*time.Second)
		q.AddAfter("b", 3*time.Second)
		q.AddAfter("a", 10*time.Second) // later: ignored
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("d", 8*time.Second)
		q.AddAfter("d", 4*time.Second) // earlier: wins
		q.AddAfter("e", 0)             // at once
		require.Equal(t, "e", mustGet(t, q))
		type got struct {
			key string
			at  time.Duration
		}
		var log []got
		for range 4 {
			k := mustGet(t, q)
			log = append(log, got{k, time.Since(start)})
			q.Done(k)
		}
		require.Equal(t, []got{{"b", 3 * time.Second}, {"c", 3 * time.Second}, {"d", 4 * time.Second}, {"a", 5 * time.Second}}, log)
		time.Sleep(time.Minute)
		require.Equal(t, 0, q.Len(), "superseded deadlines do not add again")
		q.ShutDown()
	})
}

// TestQueueAddAfterMockClock checks AddAfter follows the configured clock.
func TestQueueAddAfterMockClock(t *testing.T) {
	mock := clock.NewMock()
	q := NewQueue[int](QueueConfig{Clock: mock})
	defer q.ShutDown()
	start := mock.Now()
	q.AddAfter(1, 5*time.Second)
	require.Equal(t, 0, q.Len())
	for q.Len() == 0 {
		mock.Add(time.Second)
	}
	require.GreaterOrEqual(t, mock.Now().Sub(start), 5*time.Second)
	require.Equal(t, 1, mustGet(t, q))
}

func TestQueueShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[string](QueueConfig{})
		blocked := make(chan error, 1)
		go func() {
			_, err := q.Get(context.Background())
			blocked <- err
		}()
		synctest.Wait()
		q.ShutDown()
		require.ErrorIs(t, <-blocked, ErrClosed)
		q.ShutDown() // idempotent

		q = NewQueue[string](QueueConfig{})
		q.Add("a")
		q.Add("b")
		q.Add("p")
		require.Equal(t, "a", mustGet(t, q))
		q.Add("a") // dirty before shutdown
		q.AddAfter("later", time.Second)
		q.ShutDown()
		require.False(t, q.Add("c"), "intake stopped")
		q.AddAfter("c", time.Second)
		time.Sleep(time.Minute)
		require.Equal(t, 2, q.Len(), "delayed adds dropped")
		require.Equal(t, "b", mustGet(t, q), "waiting keys are still handed out")
		q.Done("a") // dirty: re-added even after shutdown
		require.Equal(t, "p", mustGet(t, q))
		require.Equal(t, "a", mustGet(t, q))
		_, err := q.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed)
		require.Equal(t, 3, q.Processing())
	})
}

func TestQueueShutDownWithDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[string](QueueConfig{})
		q.Add("a")
		q.Add("b")
		require.Equal(t, "a", mustGet(t, q))
		q.Add("a")
		drained := make(chan error, 1)
		go func() { drained <- q.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		step := func(f func()) {
			t.Helper()
			require.Len(t, drained, 0, "drained too early")
			f()
			synctest.Wait()
		}
		step(func() { q.Done("a") }) // dirty: re-added behind b
		step(func() { require.Equal(t, "b", mustGet(t, q)) })
		step(func() { q.Done("b") })
		step(func() { require.Equal(t, "a", mustGet(t, q)) })
		require.Len(t, drained, 0, "a is still processing")
		q.Done("a")
		require.NoError(t, <-drained)
		require.NoError(t, q.ShutDownWithDrain(context.Background()), "already drained")
	})
}

func TestQueueShutDownWithDrainContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](QueueConfig{})
		q.Add(1)
		mustGet(t, q)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, q.ShutDownWithDrain(ctx), context.DeadlineExceeded)
		done := make(chan error, 1)
		go func() { done <- q.ShutDownWithDrain(context.Background()) }()
		q.Done(1)
		require.NoError(t, <-done)
	})
}

// TestQueueShutDownEndsDrain follows client-go's contract that ShutDown
// forces a pending ShutDownWithDrain to return: a program draining on the
// first SIGTERM exits on the second. The keys still out may be Done
// afterwards as usual, and a ShutDownWithDrain called after ShutDown
// waits for the drain again.
func TestQueueShutDownEndsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[string](QueueConfig{})
		q.Add("foo")
		q.Add("bar")
		foo, bar := mustGet(t, q), mustGet(t, q)
		drained := make(chan error, 1)
		go func() { drained <- q.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		_, err := q.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed, "shutting down, nothing waiting")
		require.Empty(t, drained, "foo and bar are processing")

		q.ShutDown()
		require.ErrorIs(t, <-drained, ErrClosed, "ShutDown cut the drain short")
		go func() { drained <- q.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		q.Done(foo)
		synctest.Wait()
		require.Empty(t, drained, "a later ShutDownWithDrain waits for bar")
		q.Done(bar)
		require.NoError(t, <-drained)
		q.ShutDown()
		require.NoError(t, q.ShutDownWithDrain(context.Background()), "drained already")
	})
}

// TestQueueConcurrent hammers a Queue with producers and consumers and
// checks that no key is processed twice at once and that every Add is
// followed by a Get of its key.
func TestQueueConcurrent(t *testing.T) {
	const keys, producers, consumers, adds = 16, 4, 4, 3000
	q := NewQueue[int](QueueConfig{})
	var ticket atomic.Int64
	var busy [keys]atomic.Bool
	var lastAdd, lastGet [keys]atomic.Int64
	storeMax := func(v *atomic.Int64, x int64) {
		for {
			old := v.Load()
			if x <= old || v.CompareAndSwap(old, x) {
				return
			}
		}
	}
	var wg, cw sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range adds {
				k := (i*7 + p) % keys
				storeMax(&lastAdd[k], ticket.Add(1)) // before Add: the Get that serves it comes later
				q.Add(k)
			}
		})
	}
	var overlaps atomic.Int64
	for range consumers {
		cw.Go(func() {
			for {
				k, err := q.Get(context.Background())
				if err != nil {
					return
				}
				storeMax(&lastGet[k], ticket.Add(1))
				if !busy[k].CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				busy[k].Store(false)
				q.Done(k)
			}
		})
	}
	wg.Wait()
	require.NoError(t, q.ShutDownWithDrain(context.Background()))
	cw.Wait()
	require.Zero(t, overlaps.Load(), "a key was processed twice at once")
	for k := range keys {
		require.Greater(t, lastGet[k].Load(), lastAdd[k].Load(), "key %d: last Add not served", k)
	}
	require.Equal(t, 0, q.Len())
	require.Equal(t, 0, q.Processing())
}
