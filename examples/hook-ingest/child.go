package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is an event or drain process started by the demo.
//
// A gated child (started with -start-gate) prints a line once it is up and
// then waits for the parent to write the instant at which to record its
// event. The demo starts all event processes first and releases them once
// all are up, so the time processes take to start on a busy machine does
// not blur the planned bursts and pauses.
type child struct {
	session string
	args    []string
	stdin   io.WriteCloser // gated children only
	out     lineSignal
	done    chan struct{}
	outcome outcome
}

// outcome is how one child process ended.
type outcome struct {
	Session string
	Args    []string
	Err     error
	Killed  bool // by SIGKILL: the demo's crash
	Output  string
}

// startChild starts exe with args and waits for it in the background.
func startChild(ctx context.Context, wg *sync.WaitGroup, exe string, env []string, session string, gated bool, args ...string) (*child, error) {
	c := &child{session: session, args: args, done: make(chan struct{}), out: lineSignal{line: make(chan struct{})}}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second
	cmd.Stdout, cmd.Stderr = &c.out, &c.out
	if gated {
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		c.stdin = w
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wg.Go(func() {
		defer close(c.done)
		err := cmd.Wait()
		c.outcome = outcome{Session: session, Args: args, Err: err, Output: strings.TrimSpace(c.out.String())}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ws, ok := ee.Sys().(syscall.WaitStatus)
			c.outcome.Killed = ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && ctx.Err() == nil
		}
	})
	return c, nil
}

// up waits until a gated child has printed its first line.
func (c *child) up(ctx context.Context) error {
	select {
	case <-c.out.line:
		return nil
	case <-c.done:
		return fmt.Errorf("%s exited before it was up: %v %s", strings.Join(c.args[:3], " "), c.outcome.Err, c.outcome.Output)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release tells a gated child when to record its event.
func (c *child) release(at time.Time) error {
	_, err := io.WriteString(c.stdin, at.Format(time.RFC3339Nano)+"\n")
	if cerr := c.stdin.Close(); err == nil {
		err = cerr
	}
	return err
}

// lineSignal collects a child's output and closes line at the first newline.
type lineSignal struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line chan struct{}
	seen bool
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen && bytes.IndexByte(p, '\n') >= 0 {
		l.seen = true
		close(l.line)
	}
	return l.buf.Write(p)
}

func (l *lineSignal) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// awaitStart is the child's side of the demo's start gate: it says it is up,
// reads the instant to start at from stdin and waits for it.
func awaitStart(ctx context.Context) error {
	fmt.Println("up")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return fmt.Errorf("-start-gate: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
	if err != nil {
		return fmt.Errorf("-start-gate: %w", err)
	}
	return sleep(ctx, time.Until(t))
}
