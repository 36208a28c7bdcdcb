package mutex_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/pacerkit/pacer/mutex"
)

// One fan-out per account at a time: runs for the same account take
// turns, while different accounts proceed in parallel.
func ExampleKeyed() {
	var accounts mutex.Keyed[string]
	var mu sync.Mutex
	sent := map[string]int{}

	var wg sync.WaitGroup
	for _, account := range []string{"alice", "bob", "alice", "bob", "alice"} {
		wg.Go(func() {
			err := accounts.Do(context.Background(), account, func(ctx context.Context) error {
				// Only one run per account gets here at a time.
				mu.Lock()
				sent[account]++
				mu.Unlock()
				return nil
			})
			if err != nil {
				fmt.Println(err)
			}
		})
	}
	wg.Wait()
	fmt.Println("alice:", sent["alice"], "bob:", sent["bob"], "keys left:", accounts.Len())
	// Output: alice: 3 bob: 2 keys left: 0
}

// TryLock skips a key that is busy instead of waiting for it.
func ExampleKeyed_TryLock() {
	var m mutex.Keyed[int]
	m.Lock(42)
	fmt.Println(m.TryLock(42), m.TryLock(7))
	m.Unlock(42)
	m.Unlock(7)
	fmt.Println(m.Len())
	// Output:
	// false true
	// 0
}

// LockContext gives up when its context ends, holding nothing.
func ExampleKeyed_LockContext() {
	var m mutex.Keyed[string]
	m.Lock("report")
	defer m.Unlock("report")

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // for instance, the request was abandoned
	fmt.Println(m.LockContext(ctx, "report"))
	// Output: context canceled
}

// Two processes running this program never process one session at once.
func ExampleLockFile() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	unlock, err := mutex.LockFile(context.Background(), filepath.Join(dir, "session-123.lock"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer unlock()
	fmt.Println("processing session 123")
	// Output: processing session 123
}
