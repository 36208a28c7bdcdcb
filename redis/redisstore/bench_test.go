package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// BenchmarkPing is the floor of every other benchmark here: one round trip
// to the server. Against PING itself, x-ping shows how much two sets of
// rounds differ by chance on the machine.
//
// The benchmarks run against a redis-server of their own (see
// redistest.StartServer), so that no other client's commands queue with
// theirs.
func BenchmarkPing(b *testing.B) {
	c := benchClient(b, redistest.StartServer(b).Addr())
	redistest.PingVersusPing(b, c)
}

// BenchmarkAdd adds one value at a time to 1,000 keys, ready at once, and
// reports its cost as a multiple of a PING's (x-ping).
func BenchmarkAdd(b *testing.B) {
	c := benchClient(b, redistest.StartServer(b).Addr())
	s, err := redisstore.New(b.Context(), c, redisstore.Config{Prefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	v := [][]byte{[]byte(`{"user":42,"task":"recompute"}`)}
	add := func(i int64) error {
		return s.Add(ctx, "bench", strconv.FormatInt(i%1000, 10), v, store.AddParams{})
	}
	redistest.VersusPing(b, c, add)
}
