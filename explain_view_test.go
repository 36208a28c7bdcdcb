package pacer_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

type account struct {
	Tenant string `json:"tenant"`
	ID     int    `json:"id"`
}

type order struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// accountCodec encodes an account key as JSON.
type accountCodec = pacer.JSON[account]

// A view of a Runner with a Store decodes with the Runner's codecs, and
// explains a key given as stored.
func TestViewWithStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		r, err := pacer.New(pacer.Config[account, order]{Store: mem, Name: "orders", KeyCodec: accountCodec{}, Debounce: time.Second},
			func(context.Context, account, []order) error { return nil })
		require.NoError(t, err)
		defer r.Shutdown(context.Background())
		v := r.View()
		require.Equal(t, "orders", v.Queue())
		require.Equal(t, store.Store(mem), v.Store())

		k := account{"acme", 7}
		require.NoError(t, r.Add(context.Background(), k, order{"x-1", 2}))
		page, err := mem.Keys(context.Background(), "orders", store.KeyQuery{})
		require.NoError(t, err)
		require.Len(t, page.Keys, 1)
		stored := page.Keys[0].Key
		require.Equal(t, `{"tenant":"acme","id":7}`, v.FormatKey(stored), "a struct key as JSON")

		vals, err := mem.Values(context.Background(), "orders", stored, 1)
		require.NoError(t, err)
		require.Equal(t, "{\n  \"sku\": \"x-1\",\n  \"qty\": 2\n}", v.FormatValue(vals[0].Value))
		require.Equal(t, `undecodable: invalid character 'o' in literal null (expecting 'u'): "not json"`, v.FormatValue([]byte("not json")))
		require.Equal(t, `"{bad" (undecodable: invalid character 'b' looking for beginning of object key string)`, v.FormatKey("{bad"))

		x, err := v.Explain(context.Background(), stored)
		require.NoError(t, err)
		require.Equal(t, `key "{\"tenant\":\"acme\",\"id\":7}" is debouncing until 00:00:01Z (its quiet period)`, x.String())
		require.Equal(t, stored, x.StoredKey)
		_, err = v.Explain(context.Background(), "{bad")
		require.ErrorContains(t, err, `pacer: stored key "{bad" does not decode`)
	})
}

// A view of a Runner in the process reads keys and values as a Runner
// with a Store would by default.
func TestViewInProcess(t *testing.T) {
	r, err := pacer.New(pacer.Config[int, string]{}, func(context.Context, int, []string) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background())
	v := r.View()
	require.Equal(t, "", v.Queue())
	require.Nil(t, v.Store())
	require.Equal(t, "42", v.FormatKey("42"))
	require.Equal(t, `"x" (undecodable: pacer: key "x" is not a int: strconv.ParseInt: parsing "x": invalid syntax)`, v.FormatKey("x"))
	require.Equal(t, `"hello"`, v.FormatValue([]byte(`"hello"`)), "a string value marshals to JSON")

	require.NoError(t, r.Add(context.Background(), 42, "a"))
	x, err := v.Explain(context.Background(), "42")
	require.NoError(t, err)
	require.Equal(t, `key "42" is ready, next in line`, x.String())

	// Keys that have no default stored form do not decode.
	rs, err := pacer.New(pacer.Config[account, int]{}, func(context.Context, account, []int) error { return nil })
	require.NoError(t, err)
	defer rs.Shutdown(context.Background())
	_, err = rs.View().Explain(context.Background(), `{"tenant":"a","id":1}`)
	require.ErrorContains(t, err, "have no stored form without Config.Store")
}

// A value that does not marshal to JSON shows with %v.
func TestViewFormatValueNotJSON(t *testing.T) {
	r, err := pacer.New(pacer.Config[string, float64]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Codec: nanCodec{}},
		func(context.Context, string, []float64) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background())
	require.Equal(t, "NaN", r.View().FormatValue([]byte("nan")))
}

// nanCodec decodes every value to NaN, which JSON cannot hold.
type nanCodec struct{}

func (nanCodec) Encode(float64) ([]byte, error) { return []byte("nan"), nil }
func (nanCodec) Decode([]byte) (float64, error) { return nan(), nil }

func nan() float64 { return math.NaN() }
