package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// An instance is one process of this program in the multi-instance demo,
// serving for real (-api-url, -redis) on a loopback port.
type instance struct {
	name    string // i1, i2, ...
	cmd     *exec.Cmd
	log     *logBuffer
	webhook string        // its webhook URL, from its "listening" line
	done    chan struct{} // closed once the process has exited
	err     error         // how it exited, once done is closed
}

// listeningLine is the log line of an instance that serves, with its URL.
var listeningLine = regexp.MustCompile(`msg=listening webhook=(\S+)`)

// startInstance starts the program with args and waits until it serves.
// Its output is kept (see logBuffer), and copied to tee when not nil.
// Whatever happens, the caller must stop or kill the instance and wait
// for done.
func startInstance(ctx context.Context, command func(args ...string) *exec.Cmd, name string, args []string, tee io.Writer) (*instance, error) {
	i := &instance{name: name, cmd: command(args...), log: newLogBuffer(name, tee), done: make(chan struct{})}
	i.cmd.Stdout, i.cmd.Stderr = i.log, i.log
	// Output copying ends soon after the process, even if something it
	// started holds the pipes.
	i.cmd.WaitDelay = time.Second
	if err := i.cmd.Start(); err != nil {
		close(i.done)
		return i, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		defer close(i.done)
		i.err = i.cmd.Wait()
	}()
	for {
		grew := i.log.grew()
		if m := listeningLine.FindStringSubmatch(i.log.String()); m != nil {
			i.webhook = m[1]
			return i, nil
		}
		select {
		case <-grew:
		case <-i.done:
			return i, fmt.Errorf("%s exited before it served: %v\n%s", name, i.err, i.log)
		case <-ctx.Done():
			return i, fmt.Errorf("waiting for %s to serve: %w\n%s", name, ctx.Err(), i.log)
		}
	}
}

// pid is the instance's process ID.
func (i *instance) pid() int { return i.cmd.Process.Pid }

// kill ends the process at once with SIGKILL, as a crash would.
func (i *instance) kill() error { return i.cmd.Process.Signal(syscall.SIGKILL) }

// stop asks the process to shut down with SIGTERM and waits until it has,
// or ctx ends (then it kills it). It returns how the process exited.
func (i *instance) stop(ctx context.Context) error {
	if err := i.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-i.done:
		return i.err
	case <-ctx.Done():
		_ = i.kill()
		<-i.done
		return fmt.Errorf("%s did not stop in time: %w", i.name, ctx.Err())
	}
}

// exited reports whether the process has ended.
func (i *instance) exited() bool {
	select {
	case <-i.done:
		return true
	default:
		return false
	}
}

// A logBuffer keeps an instance's output and, with a tee, copies each
// line there prefixed with the instance's name. It is safe for concurrent
// use.
type logBuffer struct {
	prefix string
	tee    io.Writer

	mu      sync.Mutex
	buf     bytes.Buffer
	partial bool          // the last write ended mid-line
	signal  chan struct{} // closed at the next write
}

func newLogBuffer(name string, tee io.Writer) *logBuffer {
	return &logBuffer{prefix: name + ": ", tee: tee, signal: make(chan struct{})}
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.tee != nil {
		var out bytes.Buffer
		for line := range bytes.SplitAfterSeq(p, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if !b.partial {
				out.WriteString(b.prefix)
			}
			out.Write(line)
			b.partial = line[len(line)-1] != '\n'
		}
		_, _ = b.tee.Write(out.Bytes())
	}
	close(b.signal)
	b.signal = make(chan struct{})
	return len(p), nil
}

// grew returns a channel closed at the next write.
func (b *logBuffer) grew() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.signal
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
