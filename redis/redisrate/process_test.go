package redisrate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// childEnv, when set, makes the test binary a child process of
// TestProcessesShareBudget: it holds the prefix to use.
const childEnv = "REDISRATE_TEST_CHILD"

// childTries is how many events each child asks for.
const childTries = 10

// runChild asks Allow for childTries events of the bucket "procs" (Rate
// 0.1, Burst 10) and prints how many it got.
func runChild() int {
	opt, err := redis.ParseURL(os.Getenv("PACER_REDIS_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c := redis.NewClient(opt)
	defer c.Close()
	l, err := redisrate.NewBucket(context.Background(), c, redisrate.BucketConfig{Rate: 0.1, Burst: 10, Name: "procs", Prefix: os.Getenv(childEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	got := 0
	for range childTries {
		ok, err := l.Allow(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if ok {
			got++
		}
	}
	fmt.Println(got)
	return 0
}

// TestProcessesShareBudget: three OS processes asking at once for 10
// events each from one bucket of Burst 10 get 10 between them.
func TestProcessesShareBudget(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	exe, err := os.Executable()
	require.NoError(t, err)
	counts := make([]int, 3)
	var wg sync.WaitGroup
	for i := range counts {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+p, "PACER_REDIS_URL="+enginetest.RedisURL())
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", i, err)
				return
			}
			counts[i], err = strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Errorf("child %d printed %q", i, out)
			}
		})
	}
	wg.Wait()
	require.Equal(t, 10, counts[0]+counts[1]+counts[2], "events per process: %v", counts)
}
