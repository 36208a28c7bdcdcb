package instances_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/internal/enginetest"
	pacerotel "github.com/pacerkit/pacer/otel"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// instanceStore is a store of one instance of a service, over the engine
// that all instances share; a test makes one per instance.
type instanceStore interface {
	store.Store
	store.Inspector
}

// An Add's span reaches, as a link, the span of the call that handles its
// value in another instance sharing a Redis store.
func TestLinksAcrossInstancesRedis(t *testing.T) {
	prefix := "pacerotel-test-" + randomHex(6)
	newStore := func(t *testing.T) instanceStore {
		opt, err := redis.ParseURL(enginetest.RedisURL())
		require.NoError(t, err)
		c := redis.NewClient(opt)
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Ping(t.Context()).Err(); err != nil {
			enginetest.Missing(t, fmt.Sprintf("no Redis at %s (%v); start one or set PACER_REDIS_URL to run this test", enginetest.RedisURL(), err))
		}
		s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, s.Close())
			ctx := context.Background()
			keys, err := c.Keys(ctx, "*"+prefix+"*").Result()
			require.NoError(t, err)
			if len(keys) > 0 {
				require.NoError(t, c.Del(ctx, keys...).Err())
			}
		})
		return s
	}
	linksAcrossInstances(t, newStore)
}

// The same with a PostgreSQL store.
func TestLinksAcrossInstancesPostgres(t *testing.T) {
	schema := "pacerotel_test_" + randomHex(6)
	newStore := func(t *testing.T) instanceStore {
		pool, err := pgxpool.New(t.Context(), enginetest.PostgresURL())
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		if err := pool.Ping(t.Context()); err != nil {
			enginetest.Missing(t, fmt.Sprintf("no PostgreSQL at %s (%v); start one or set PACER_POSTGRES_URL to run this test", enginetest.PostgresURL(), err))
		}
		s, err := pgstore.New(t.Context(), pool, pgstore.Config{Schema: schema})
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, s.Close())
			_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			require.NoError(t, err)
		})
		return s
	}
	linksAcrossInstances(t, newStore)
}

// The same with the Memory store, which the instances of a test share.
func TestLinksAcrossInstancesMemory(t *testing.T) {
	m := store.NewMemory(store.MemoryConfig{})
	linksAcrossInstances(t, func(*testing.T) instanceStore { return m })
}

// order is the value of the tests: JSON of a few bytes.
type order struct {
	ID   int    `json:"id"`
	Note string `json:"note"`
}

// linksAcrossInstances adds values in one instance, with and without
// tracing, checks what each costs in the store, and handles them in
// another instance, whose spans link the Adds' spans.
func linksAcrossInstances(t *testing.T, newStore func(*testing.T) instanceStore) {
	ctx := context.Background()
	const queue = "hooks"
	// The adding instance's SDK, whose requests' spans the Adds get.
	addTP := sdktrace.NewTracerProvider()
	t.Cleanup(func() { require.NoError(t, addTP.Shutdown(context.Background())) })
	web := addTP.Tracer("web")

	// The instance that adds.
	addStore := newStore(t)
	addCfg := pacer.Config[string, order]{Store: addStore, Name: queue}
	addTel, err := pacerotel.New(addCfg, pacerotel.Config{TracerProvider: addTP})
	require.NoError(t, err)
	addCfg.Carry = addTel.Carry()
	require.NotNil(t, addCfg.Carry)
	adder, err := pacer.New(addCfg, func(context.Context, string, []order) error {
		t.Error("the adding instance handled a batch")
		return nil
	})
	require.NoError(t, err)
	// An instance of an older release, which does not trace.
	plainCfg := pacer.Config[string, order]{Store: newStore(t), Name: queue}
	plain, err := pacer.New(plainCfg, func(context.Context, string, []order) error { return nil })
	require.NoError(t, err)

	v := order{ID: 42, Note: "ship"}
	payload, err := json.Marshal(v)
	require.NoError(t, err)
	req1, span1 := web.Start(ctx, "POST /hooks")
	req2, span2 := web.Start(ctx, "POST /hooks")
	require.NoError(t, adder.Add(req1, "traced", v))
	require.NoError(t, adder.Add(req2, "traced", v))
	require.NoError(t, adder.Add(ctx, "traced", v)) // no span: nothing carried
	require.NoError(t, plain.Add(req1, "plain", v))
	span1.End()
	span2.End()
	require.NoError(t, adder.Shutdown(ctx))
	require.NoError(t, plain.Shutdown(ctx))

	// What tracing costs in the store: the frame, 28 bytes, on the values
	// that carry a span context; nothing on the others.
	sizes := func(key string) []int {
		vals, err := addStore.Values(ctx, queue, key, 10)
		require.NoError(t, err)
		var out []int
		for _, sv := range vals {
			out = append(out, len(sv.Value)-len(payload))
		}
		return out
	}
	require.Equal(t, []int{28, 28, 0}, sizes("traced"))
	require.Equal(t, []int{0}, sizes("plain"))

	// The instance that handles, whose spans go to an in-memory exporter.
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	handleCfg := pacer.Config[string, order]{Store: newStore(t), Name: queue}
	handleTel, err := pacerotel.New(handleCfg, pacerotel.Config{TracerProvider: tp, Key: true})
	require.NoError(t, err)
	handleCfg.Carry = handleTel.Carry()
	var mu sync.Mutex
	handled := map[string][]order{}
	all := make(chan struct{})
	handler, err := pacer.New(handleCfg, handleTel.Handler(func(_ context.Context, key string, batch []order) error {
		mu.Lock()
		defer mu.Unlock()
		handled[key] = append(handled[key], batch...)
		if len(handled["traced"]) == 3 && len(handled["plain"]) == 1 {
			close(all)
		}
		return nil
	}))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- handler.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(30 * time.Second): // a bound on a failure, not a wait
		t.Fatal("the values were not handled in 30 s")
	}
	require.NoError(t, handler.Shutdown(ctx)) // the spans ended with their calls
	require.NoError(t, <-done)

	linked := map[string][]trace.SpanContext{}
	for _, sp := range exp.GetSpans() {
		if sp.Name != "process "+queue {
			continue
		}
		key := ""
		for _, kv := range sp.Attributes {
			if kv.Key == "pacer.key" {
				key = kv.Value.AsString()
			}
		}
		for _, l := range sp.Links {
			require.True(t, l.SpanContext.IsRemote())
			linked[key] = append(linked[key], l.SpanContext.WithRemote(false))
		}
	}
	require.Equal(t, map[string][]trace.SpanContext{"traced": {span1.SpanContext(), span2.SpanContext()}}, linked)
}

// randomHex returns n random bytes in hexadecimal, for names no other test
// uses.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
