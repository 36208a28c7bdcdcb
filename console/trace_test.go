package console_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
)

// A value stored with the trace context of its Add (pacer.Config.Carry)
// shows without it: raw, and decoded by its Runner.
func TestValuesShowWithoutTraceContext(t *testing.T) {
	var r *pacer.Runner[string, map[string]int]
	f := setup(t, func(f *fixture, cfg *console.Config) {
		var err error
		r, err = pacer.New(pacer.Config[string, map[string]int]{Store: f.mem, Name: "traced",
			Carry: func(context.Context) []byte { return bytes.Repeat([]byte{7}, 26) }},
			func(context.Context, string, []map[string]int) error { return nil })
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
		cfg.Runners = []pacer.RunnerView{r.View()}
	})
	require.NoError(t, r.Add(context.Background(), "k", map[string]int{"id": 42}))
	framed := string(append(append([]byte{0xFF, 26}, bytes.Repeat([]byte{7}, 26)...), `{"id":42}`...))
	f.add("raw", "k", framed)

	decoded := f.page("/key?queue=traced&key=k")
	assert.Contains(t, decoded, "{\n  &#34;id&#34;: 42\n}")
	assert.Contains(t, decoded, "decoded · 9 B", "the payload's size, without the frame")
	raw := f.page("/key?queue=raw&key=k")
	assert.Contains(t, raw, "{\n  &#34;id&#34;: 42\n}")
	assert.Contains(t, raw, "json · 9 B")
}
