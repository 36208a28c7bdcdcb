package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// childTenants is what a process of runTenantProcesses does.
const childTenants = "tenants"

// tenantConfig is the Config of the Runners of runTenantProcesses: a
// key's tenant is its part before "/", and tenant H weighs 3, L 1.
func tenantConfig(s store.Store, q string) pacer.Config[string, string] {
	return pacer.Config[string, string]{
		Store: s, Name: q, Workers: 2,
		Tenant:       func(k string) string { return k[:strings.IndexByte(k, '/')] },
		TenantWeight: func(tn string) int { return map[string]int{"H": 3, "L": 1}[tn] },
	}
}

// runTenantProcesses is the "Tenants" scenario of RunProcesses, for an
// engine that implements store.FairTenants: with 1,200 keys ready for each
// of tenants H (weight 3) and L (weight 1), 3 OS processes run pacer
// Runners (2 workers each, a handler of 5 ms) on the queue; of the first
// 800 batches they start together, H's and L's split 3:1, within 10%.
func runTenantProcesses(t *testing.T, p Processes) {
	if _, ok := p.Store.(store.FairTenants); !ok {
		t.Skip("the engine does not implement store.FairTenants")
	}
	const procs, keys, turns = 3, 1200, 800
	q, ctx := t.Name(), t.Context()
	adder, err := pacer.New(tenantConfig(p.Store, q), func(context.Context, string, []string) error { return nil })
	require.NoError(t, err)
	for i := range keys {
		for _, tn := range []string{"H", "L"} {
			require.NoError(t, adder.Add(ctx, fmt.Sprintf("%s/%04d", tn, i), "v"))
		}
	}
	require.NoError(t, adder.Shutdown(ctx))

	starts := make(chan string, 1024)
	children := make([]*Process, procs)
	var readers sync.WaitGroup
	for i := range children {
		c := StartProcess(t, p.Child, processEnv, p.Where, childTenants, q)
		children[i] = c
		readers.Go(func() {
			for line, ok := c.Scan(); ok; line, ok = c.Scan() {
				if key, ok := strings.CutPrefix(line, "start "); ok {
					starts <- key
				}
			}
		})
	}
	for _, c := range children {
		c.Go(t)
	}
	count := map[string]int{}
	timeout := time.After(time.Minute)
	for n := 0; n < turns; n++ {
		select {
		case key := <-starts:
			count[key[:1]]++
		case <-timeout:
			require.FailNow(t, "the processes started too few batches", "%d of %d", n, turns)
		}
	}
	for _, c := range children {
		c.Close(t)
	}
	go func() {
		for range starts { // the starts after the first turns
		}
	}()
	for _, c := range children {
		c.Wait(t)
	}
	readers.Wait()
	close(starts)
	ratio := float64(count["H"]) / float64(count["L"])
	t.Logf("turns of the first %d: %v, H:L %.3f", turns, count, ratio)
	require.InDelta(t, 3, ratio, 0.3, "H:L over the first %d batches: %v", turns, count)
}

// childRunTenants is a process of runTenantProcesses: it runs a Runner of
// tenantConfig, whose handler says "start <key>" and works 5 ms, from "go"
// until standard input closes.
func childRunTenants(t *testing.T, s store.Store, q string) {
	var mu sync.Mutex
	r, err := pacer.New(tenantConfig(s, q), func(ctx context.Context, key string, _ []string) error {
		mu.Lock()
		fmt.Printf("start %s\n", key)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		return nil
	})
	require.NoError(t, err)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(context.Background()))
	require.NoError(t, <-done)
}
