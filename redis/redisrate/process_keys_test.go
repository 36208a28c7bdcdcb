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

// childKeysEnv, when set with childEnv, makes a child process take keys
// instead (runKeysChild).
const childKeysEnv = "REDISRATE_TEST_CHILD_KEYS"

// The children of TestProcessesShareKeyBudgets: childCallers goroutines
// each call TakeKey childTakes times, over childKeys keys of a Keyed of
// Burst childKeyBurst that refills one per 10 s, so that each process's
// calls share flights.
const childKeys, childCallers, childTakes, childKeyBurst = 4, 8, 5, 5

// runKeysChild prints how many tokens of each key TakeKey took, separated
// by spaces.
func runKeysChild() int {
	opt, err := redis.ParseURL(os.Getenv("PACER_REDIS_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c := redis.NewClient(opt)
	defer c.Close()
	k, err := redisrate.NewKeyed(context.Background(), c, redisrate.KeyedConfig{Rate: 0.1, Burst: childKeyBurst, Name: "procs-keys", Prefix: os.Getenv(childEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var mu sync.Mutex
	var got [childKeys]int
	failed := false
	var wg sync.WaitGroup
	for i := range childCallers {
		wg.Go(func() {
			for j := range childTakes {
				key := (i + j) % childKeys
				w, err := k.TakeKey(context.Background(), "k"+strconv.Itoa(key))
				mu.Lock()
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed = true
				} else if w == 0 {
					got[key]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed {
		return 2
	}
	fmt.Println(strings.Trim(fmt.Sprint(got), "[]"))
	return 0
}

// TestProcessesShareKeyBudgets: three OS processes, each with calls of
// TakeKey at once over 4 keys of Burst 5, asking for far more, get
// exactly 5 of each key between them.
func TestProcessesShareKeyBudgets(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	exe, err := os.Executable()
	require.NoError(t, err)
	var totals [childKeys]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+p, childKeysEnv+"=1", "PACER_REDIS_URL="+enginetest.RedisURL())
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", i, err)
				return
			}
			fields := strings.Fields(string(out))
			if len(fields) != childKeys {
				t.Errorf("child %d printed %q", i, out)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for key, f := range fields {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Errorf("child %d printed %q", i, out)
				}
				totals[key] += n
			}
		})
	}
	wg.Wait()
	for key, n := range totals {
		require.Equal(t, childKeyBurst, n, "key %d", key)
	}
}
