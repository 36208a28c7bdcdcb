package pgrate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/store/storetest"
)

// childEnv, when set, makes the test binary a child process of the tests
// below: it holds the mode and the schema to use, "mode:schema".
const childEnv = "PGRATE_TEST_CHILD"

// The buckets of the children: "count" asks Allow for childTries events
// of a bucket that refills one per 10 s; "window" takes events as fast as
// it can for childWindow from a bucket of windowRate and windowBurst, with
// the take statement; "allow" does the same with Allow.
const (
	childTries  = 10
	childWindow = time.Second
	windowRate  = 50
	windowBurst = 5
)

// runChild is a child process: in mode "count" it prints how many events
// Allow let through, in mode "window" the server's clock of every event
// it took, one per line in Unix microseconds, in mode "allow" the clock
// of this host before and after every Allow that let an event through,
// as "before,after" in Unix microseconds.
func runChild() int {
	mode, schema, _ := strings.Cut(os.Getenv(childEnv), ":")
	if err := child(mode, schema); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func child(mode, schema string) error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, enginetest.PostgresURL())
	if err != nil {
		return err
	}
	defer pool.Close()
	if mode == "keys" {
		return keysChild(ctx, pool, schema)
	}
	if mode == "count" {
		l, err := pgrate.NewBucket(ctx, pool, pgrate.BucketConfig{Rate: 0.1, Burst: 10, Name: "procs", Schema: schema})
		if err != nil {
			return err
		}
		got := 0
		for range childTries {
			ok, err := l.Allow(ctx)
			if err != nil {
				return err
			}
			if ok {
				got++
			}
		}
		fmt.Println(got)
		return nil
	}
	l, err := pgrate.NewBucket(ctx, pool, pgrate.BucketConfig{Rate: windowRate, Burst: windowBurst, Name: "window", Schema: schema})
	if err != nil {
		return err
	}
	for end := time.Now().Add(childWindow); mode == "allow" && time.Now().Before(end); {
		before := time.Now()
		ok, err := l.Allow(ctx)
		if err != nil {
			return err
		}
		if ok {
			fmt.Printf("%d,%d\n", before.UnixMicro(), time.Now().UnixMicro())
		}
	}
	for end := time.Now().Add(childWindow); mode == "window" && time.Now().Before(end); {
		refused, _, now, _, err := pgrate.Take(ctx, l, 0) // Allow's statement, with the clock of its reply
		if err != nil {
			return err
		}
		if !refused {
			fmt.Println(now.UnixMicro())
		}
	}
	return nil
}

// runChildren runs three child processes in mode on schema at once and
// returns what each printed.
func runChildren(t *testing.T, mode, schema string) [][]string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	outs := make([][]string, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+mode+":"+schema, "PACER_POSTGRES_URL="+enginetest.PostgresURL())
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", i, err)
				return
			}
			outs[i] = strings.Fields(string(out))
		})
	}
	wg.Wait()
	return outs
}

// TestProcessesShareBudget: three OS processes asking at once for 10
// events each from one bucket of Burst 10 get 10 between them.
func TestProcessesShareBudget(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	newBucket(t, pool, pgrate.BucketConfig{Rate: 0.1, Name: "procs", Schema: schema}) // migrates, so the children only read it
	total := 0
	counts := runChildren(t, "count", schema)
	for i, out := range counts {
		require.Len(t, out, 1, "child %d", i)
		n, err := strconv.Atoi(out[0])
		require.NoError(t, err)
		total += n
	}
	require.Equal(t, 10, total, "events per process: %v", counts)
}

// TestProcessesKeepTheRate: three OS processes taking events from one
// bucket as fast as they can for a second let through, between them, at
// most Rate·t + Burst events in every span t between two of them on the
// server's clock, and about Rate·t in all.
func TestProcessesKeepTheRate(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	newBucket(t, pool, pgrate.BucketConfig{Rate: windowRate, Name: "window", Schema: schema})
	var at []int64
	per := make([]int, 3)
	for i, out := range runChildren(t, "window", schema) {
		per[i] = len(out)
		for _, s := range out {
			us, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err)
			at = append(at, us)
		}
	}
	slices.Sort(at)
	require.NotEmpty(t, at)
	for i := range at {
		for j := i; j < len(at); j++ {
			span := time.Duration(at[j]-at[i]) * time.Microsecond
			most := int(span.Seconds()*windowRate) + windowBurst
			require.LessOrEqual(t, j-i+1, most, "%d events in %v", j-i+1, span)
		}
	}
	span := time.Duration(at[len(at)-1]-at[0]) * time.Microsecond
	least := int(0.8 * span.Seconds() * windowRate)
	require.GreaterOrEqual(t, len(at), least, "%d events in %v: far fewer than the rate allows", len(at), span)
	t.Logf("%d events in %v, per process %v", len(at), span, per)
}

// TestProcessesAllowKeepsTheRate: three OS processes calling Allow on one
// bucket as fast as they can for a second let through, between them, no
// more than GCRA allows at any instants within the brackets of the calls
// (storetest.CheckRate), and about Rate·t in all.
func TestProcessesAllowKeepsTheRate(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	newBucket(t, pool, pgrate.BucketConfig{Rate: windowRate, Name: "window", Schema: schema})
	var calls []storetest.TokenCall
	per := make([]int, 3)
	for i, out := range runChildren(t, "allow", schema) {
		per[i] = len(out)
		for _, s := range out {
			before, after, _ := strings.Cut(s, ",")
			b, err := strconv.ParseInt(before, 10, 64)
			require.NoError(t, err)
			a, err := strconv.ParseInt(after, 10, 64)
			require.NoError(t, err)
			calls = append(calls, storetest.TokenCall{Asked: time.UnixMicro(b), Started: time.UnixMicro(a)})
		}
	}
	require.NotEmpty(t, calls)
	storetest.CheckRate(t, "Allow", calls, windowRate, windowBurst)
	first, last := calls[0].Asked, calls[0].Started
	for _, c := range calls {
		if c.Asked.Before(first) {
			first = c.Asked
		}
		if c.Started.After(last) {
			last = c.Started
		}
	}
	span := last.Sub(first)
	least := int(0.8 * span.Seconds() * windowRate)
	require.GreaterOrEqual(t, len(calls), least, "%d events in %v: far fewer than the rate allows", len(calls), span)
	t.Logf("%d events in %v, per process %v", len(calls), span, per)
}
