//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package mutex_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/mutex"
	"github.com/stretchr/testify/require"
)

// helperEnv names the lock file a re-executed test binary must lock in
// TestHelperProcess.
const helperEnv = "PACER_MUTEX_LOCKFILE_HELPER"

func TestLockFileExcludesWithinOneProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "lock")
		unlock, err := mutex.LockFile(context.Background(), path)
		require.NoError(t, err)

		// A second open file on the same path conflicts with the first.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = mutex.LockFile(ctx, path)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)

		// A waiter gets the lock once it is released.
		got := make(chan error, 1)
		var unlock2 func() error
		go func() {
			var err error
			unlock2, err = mutex.LockFile(context.Background(), path)
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("LockFile returned %v while the lock was held", err)
		default:
		}
		require.NoError(t, unlock())
		require.NoError(t, <-got)

		// unlock is idempotent, and a stale unlock does not release
		// the new holder's lock.
		require.NoError(t, unlock())
		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		_, err = mutex.LockFile(ctx, path)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, unlock2())
		require.NoError(t, unlock2())

		_, err = os.Stat(path)
		require.NoError(t, err, "the lock file is never deleted")
	})
}

func TestLockFileCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "lock")
		unlock, err := mutex.LockFile(context.Background(), path)
		require.NoError(t, err)
		defer unlock()

		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := mutex.LockFile(ctx, path)
			got <- err
		}()
		time.Sleep(time.Minute) // fake time: the waiter polls all along
		select {
		case err := <-got:
			t.Fatalf("LockFile returned %v while the lock was held", err)
		default:
		}
		cancel()
		require.ErrorIs(t, <-got, context.Canceled)
	})
}

func TestLockFileEndedContextFailsEvenWhenFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mutex.LockFile(ctx, path)
	require.ErrorIs(t, err, context.Canceled)
}

func TestLockFileCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := mutex.LockFile(context.Background(), path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Zero(t, info.Mode().Perm()&0o077, "only the owner may open the lock file")
	require.NoError(t, unlock())
}

func TestLockFileBadPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "lock")
	_, err := mutex.LockFile(context.Background(), path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "mutex: ")
}

// TestLockFileReleasedWhenHolderIsKilled runs a child process that takes
// the lock, then kills it with SIGKILL: the kernel releases the lock, so
// this process gets it without any stale-lock timeout.
func TestLockFileReleasedWhenHolderIsKilled(t *testing.T) {
	testHolderKeepsLockUntilKilled(t, "TestHelperProcess")
}

// TestLockFileSurvivesGarbageCollection runs a child process that takes the
// lock, drops unlock and collects garbage: the lock must still hold until
// the child dies.
func TestLockFileSurvivesGarbageCollection(t *testing.T) {
	testHolderKeepsLockUntilKilled(t, "TestHelperProcessDropsUnlock")
}

// testHolderKeepsLockUntilKilled re-executes the test binary to run the
// helper test named helper, which takes the lock and prints "locked". It
// checks that this process cannot take the lock while the child lives, and
// can once the child is killed.
func testHolderKeepsLockUntilKilled(t *testing.T, helper string) {
	path := filepath.Join(t.TempDir(), "lock")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	child.Env = append(os.Environ(), helperEnv+"="+path)
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe() // never written: the child blocks on it
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	defer func() { // reap the child even if the test fails early
		_ = child.Process.Kill()
		_ = child.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "locked" {
	}
	require.Equal(t, "locked", lines.Text(), "the child exited before taking the lock")

	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = mutex.LockFile(short, path)
	cancelShort()
	require.ErrorIs(t, err, context.DeadlineExceeded, "the child holds the lock")

	require.NoError(t, child.Process.Kill())
	require.Error(t, child.Wait(), "the child was killed")

	unlock, err := mutex.LockFile(ctx, path)
	require.NoError(t, err, "the kernel released the dead child's lock")
	require.NoError(t, unlock())
}

// TestHelperProcess is not a test: re-executed by
// TestLockFileReleasedWhenHolderIsKilled, it takes the lock named in its
// environment, says so on stdout, and holds it until killed or until its
// stdin closes.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestLockFileReleasedWhenHolderIsKilled")
	}
	unlock, err := mutex.LockFile(context.Background(), path)
	require.NoError(t, err)
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, unlock())
}

// TestHelperProcessDropsUnlock is not a test: re-executed by
// TestLockFileSurvivesGarbageCollection, it takes the lock named in its
// environment, drops unlock, runs the garbage collector and any finalizers
// it queued, says "locked" on stdout, and waits to be killed.
func TestHelperProcessDropsUnlock(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestLockFileSurvivesGarbageCollection")
	}
	_, err := mutex.LockFile(context.Background(), path)
	require.NoError(t, err)
	for range 3 {
		collect()
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// collect runs a garbage collection and waits until the finalizer of an
// object that became unreachable before it has run. Finalizers run one at a
// time on one goroutine, so a few rounds of collect also let the finalizers
// of earlier garbage run.
func collect() {
	done := make(chan struct{})
	// A pointer-free object this small could share a block with others
	// and never be freed; a pointer keeps it out of the tiny allocator.
	runtime.SetFinalizer(&struct{ p *byte }{}, func(any) { close(done) })
	runtime.GC()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // bound the wait: the test checks the outcome
	}
}
