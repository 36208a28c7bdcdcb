//go:build unix

package redisstore_test

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An eventLog is a file that one instance appends to, one line per event,
// each line in one write: a process killed with SIGKILL loses no line it
// wrote, since the page cache outlives it. The lines are, with times in
// Unix nanoseconds:
//
//	S KEY FENCE ATTEMPT TIME V1,V2,...  a handler call started
//	D KEY FENCE TIME                    it did its work
//	E KEY FENCE TIME ok|lost            it returned
//	F KEY FENCE                         the engine accepted its Ack
//	X KEY ERR                           OnDrop was called
type eventLog struct{ f *os.File }

func openEventLog(path string) (*eventLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	return &eventLog{f: f}, err
}

func (l *eventLog) write(fields ...any) {
	_, _ = l.f.WriteString(fmt.Sprintln(fields...))
}

func (l *eventLog) Close() error { return l.f.Close() }

// A call is one handler call, as its instance's event log tells it.
type call struct {
	in      *instance
	key     string
	fence   uint64
	attempt int
	values  []int
	start   time.Time
	did     time.Time // zero if it did not do its work
	end     time.Time // zero if it never returned
	ok      bool      // it returned nil
	acked   bool      // the engine accepted its Ack
}

// readCalls returns the handler calls of in, and the keys it dropped.
func readCalls(t *testing.T, in *instance) (calls []*call, drops []string) {
	t.Helper()
	f, err := os.Open(in.log)
	require.NoError(t, err)
	defer f.Close()
	type id struct {
		key   string
		fence uint64
	}
	byID := map[id]*call{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		fs := strings.Fields(line)
		bad := func(why string) { t.Fatalf("%s: %s: %q", in.log, why, line) }
		if len(fs) >= 2 && fs[0] == "X" {
			drops = append(drops, line)
			continue
		}
		if len(fs) < 3 {
			bad("too short")
		}
		fence, err := strconv.ParseUint(fs[2], 10, 64)
		if err != nil {
			bad(err.Error())
		}
		k := id{fs[1], fence}
		c := byID[k]
		switch {
		case fs[0] == "S" && len(fs) == 6:
			if c != nil {
				bad("a second call under one fence")
			}
			c = &call{in: in, key: fs[1], fence: fence, start: unixNano(t, fs[4])}
			if c.attempt, err = strconv.Atoi(fs[3]); err != nil {
				bad(err.Error())
			}
			for v := range strings.SplitSeq(fs[5], ",") {
				n, err := strconv.Atoi(v)
				if err != nil {
					bad(err.Error())
				}
				c.values = append(c.values, n)
			}
			byID[k] = c
			calls = append(calls, c)
		case c == nil:
			bad("an event of a call that did not start")
		case fs[0] == "D" && len(fs) == 4:
			c.did = unixNano(t, fs[3])
		case fs[0] == "E" && len(fs) == 5:
			c.end, c.ok = unixNano(t, fs[3]), fs[4] == "ok"
		case fs[0] == "F" && len(fs) == 3:
			c.acked = true
		default:
			bad("not an event")
		}
	}
	require.NoError(t, lines.Err())
	return calls, drops
}

func unixNano(t *testing.T, s string) time.Time {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return time.Unix(0, n)
}

// byKey groups calls by key, each key's calls in fence order.
func byKey(calls []*call) map[string][]*call {
	m := map[string][]*call{}
	for _, c := range calls {
		m[c.key] = append(m[c.key], c)
	}
	for _, cs := range m {
		slices.SortFunc(cs, func(a, b *call) int { return cmp.Compare(a.fence, b.fence) })
	}
	return m
}
