//go:build unix

package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// errGone is what an Add sent to an instance that died before it answered
// returns: the value may or may not be stored.
var errGone = errors.New("instance gone before it answered")

// An instance is one child process running TestChildHelper, seen from
// the parent.
type instance struct {
	role, gen int
	log       string // its event log
	cmd       *exec.Cmd

	wmu   sync.Mutex // orders the writes to stdin
	stdin io.WriteCloser

	mu      sync.Mutex
	pending map[int]chan error // by value, the Adds awaiting an answer
	dead    bool

	ready   chan struct{} // closed on "ready"
	frozen  chan string   // "frozen" lines
	armed   chan struct{} // "armed" lines
	claimed chan string   // "claimed" lines
	lapsed  chan string   // "lapsed" lines
	exited  chan struct{} // closed once the process was reaped
	err     error         // how it exited, once exited is closed
}

// startInstance starts the instance role, generation gen, configured by
// cfg, with its event log in dir. It does not wait for it to be ready.
func startInstance(t *testing.T, ctx context.Context, cfg childConfig, dir string, role, gen int) *instance {
	t.Helper()
	cfg.Log = filepath.Join(dir, fmt.Sprintf("instance-%d-%d.log", role, gen))
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	in := &instance{role: role, gen: gen, log: cfg.Log, cmd: cmd, pending: map[int]chan error{},
		ready: make(chan struct{}), frozen: make(chan string, 8), armed: make(chan struct{}, 8), claimed: make(chan string, 8), lapsed: make(chan string, 8),
		exited: make(chan struct{})}
	in.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go in.read(out)
	t.Cleanup(func() { // reap it even if the test fails early
		_ = cmd.Process.Kill()
		<-in.exited
	})
	return in
}

// read reads the instance's answers until it exits, then reaps it.
func (in *instance) read(out io.Reader) {
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 1 && f[0] == "ready":
			close(in.ready)
		case len(f) == 2 && f[0] == "ack":
			in.answer(f[1], nil)
		case len(f) >= 3 && f[0] == "nack":
			in.answer(f[1], errors.New(strings.Join(f[2:], " ")))
		case len(f) == 3 && f[0] == "frozen":
			in.frozen <- lines.Text()
		case len(f) == 1 && f[0] == "armed":
			in.armed <- struct{}{}
		case len(f) == 3 && f[0] == "claimed":
			in.claimed <- lines.Text()
		case len(f) == 2 && f[0] == "lapsed":
			in.lapsed <- lines.Text()
		case len(f) == 1 && f[0] == "PASS": // the test binary's own
		default:
			fmt.Fprintf(os.Stderr, "instance %d.%d: %s\n", in.role, in.gen, lines.Text())
		}
	}
	_, _ = io.Copy(io.Discard, out)
	in.err = in.cmd.Wait()
	in.mu.Lock()
	in.dead = true
	for _, ch := range in.pending {
		ch <- errGone
	}
	in.pending = nil
	in.mu.Unlock()
	close(in.exited)
}

func (in *instance) answer(value string, err error) {
	v, _ := strconv.Atoi(value)
	in.mu.Lock()
	defer in.mu.Unlock()
	if ch, ok := in.pending[v]; ok {
		ch <- err
		delete(in.pending, v)
	}
}

// add asks the instance to add v to key, and waits for its answer: nil
// once its Add returned nil, errGone if it died first.
func (in *instance) add(key string, v int) error {
	ch := make(chan error, 1)
	in.mu.Lock()
	if in.dead {
		in.mu.Unlock()
		return errGone
	}
	in.pending[v] = ch
	in.mu.Unlock()
	// If the write fails, the instance died: read answers errGone.
	_ = in.send(fmt.Sprintf("add %s %d", key, v))
	return <-ch
}

func (in *instance) send(line string) error {
	in.wmu.Lock()
	defer in.wmu.Unlock()
	_, err := io.WriteString(in.stdin, line+"\n")
	return err
}

// stop closes the instance's stdin, which makes it shut its Runner down
// and exit, and waits at most d for it to.
func (in *instance) stop(t *testing.T, d time.Duration) {
	t.Helper()
	in.wmu.Lock()
	_ = in.stdin.Close()
	in.wmu.Unlock()
	select {
	case <-in.exited:
		require.NoError(t, in.err, "instance %d.%d exits cleanly", in.role, in.gen)
	case <-time.After(d):
		t.Fatalf("instance %d.%d did not exit within %v of its stdin closing", in.role, in.gen, d)
	}
}

// A fleet is the instances of one service, by role; a killed role is
// started again as its next generation.
type fleet struct {
	t   *testing.T
	ctx context.Context
	cfg childConfig
	dir string

	mu   sync.Mutex
	live []*instance // by role; nil while a role restarts
	all  []*instance // every instance started, in order
}

// startFleet starts n instances configured by cfg and waits until they
// are ready.
func startFleet(t *testing.T, ctx context.Context, cfg childConfig, n int) *fleet {
	f := &fleet{t: t, ctx: ctx, cfg: cfg, dir: t.TempDir(), live: make([]*instance, n)}
	for role := range n {
		f.all = append(f.all, startInstance(t, ctx, cfg, f.dir, role, 0))
	}
	for role, in := range f.all {
		in.waitReady(t)
		f.live[role] = in
	}
	return f
}

func (in *instance) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-in.ready:
	case <-in.exited:
		t.Fatalf("instance %d.%d exited before it was ready: %v", in.role, in.gen, in.err)
	case <-time.After(30 * time.Second):
		t.Fatalf("instance %d.%d not ready after 30 s", in.role, in.gen)
	}
}

// pick returns a random live instance, or role's if role >= 0 and it is
// live; nil if there is none.
func (f *fleet) pick(role int) *instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	if role >= 0 {
		return f.live[role]
	}
	var live []*instance
	for _, in := range f.live {
		if in != nil {
			live = append(live, in)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[rand.N(len(live))]
}

// add adds v to key at a random live instance, and returns its answer.
func (f *fleet) add(key string, v int) error {
	in := f.pick(-1)
	if in == nil {
		return errGone
	}
	return in.add(key, v)
}

// kill makes role's instance freeze its workers mid-batch, once they did
// their work, then kills it with SIGKILL. It returns the killed instance
// and when it was seen dead.
func (f *fleet) kill(role int) (*instance, time.Time) {
	t := f.t
	t.Helper()
	in := f.pick(role)
	require.NoError(t, in.send("freeze"))
	for range f.cfg.Workers {
		select {
		case <-in.frozen:
		case <-in.exited:
			t.Fatalf("instance %d.%d exited while freezing: %v", in.role, in.gen, in.err)
		case <-time.After(30 * time.Second):
			t.Fatalf("instance %d.%d: its workers did not freeze within 30 s", in.role, in.gen)
		}
	}
	f.mu.Lock()
	f.live[role] = nil
	f.mu.Unlock()
	require.NoError(t, in.cmd.Process.Kill())
	<-in.exited
	dead := time.Now()
	require.ErrorContains(t, in.err, "signal: killed")
	return in, dead
}

// restart starts role's next generation and waits until it is ready.
func (f *fleet) restart(role int) *instance {
	t := f.t
	t.Helper()
	gen := 0
	f.mu.Lock()
	for _, in := range f.all {
		if in.role == role {
			gen++
		}
	}
	f.mu.Unlock()
	in := startInstance(t, f.ctx, f.cfg, f.dir, role, gen)
	in.waitReady(t)
	f.mu.Lock()
	f.all = append(f.all, in)
	f.live[role] = in
	f.mu.Unlock()
	return in
}

// stop stops every live instance, and waits for them to exit cleanly.
func (f *fleet) stop() {
	f.t.Helper()
	for _, in := range f.live {
		if in != nil {
			in.stop(f.t, 60*time.Second)
		}
	}
}
