package console_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// oddKeys are keys that break a careless page: markup, URL syntax,
// bytes that are not UTF-8, the empty key.
var oddKeys = []string{
	`<script>alert(1)</script>`,
	`a&b=c?d#e/f%20+g`,
	"\x00\xff\xfe",
	"",
	"line\nbreak",
	"ünïcødé ☃",
	"/leading/slash",
	`"quoted" 'single'`,
}

func TestOddKeysRoundTrip(t *testing.T) {
	f := setup(t)
	for i, k := range oddKeys {
		f.add("jobs", k, fmt.Sprintf("value-of-%d", i))
	}
	body := f.page("/queue?queue=jobs")
	assert.NotContains(t, body, "<script>alert", "markup in a key is escaped")
	assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, body, `<span class="k k-quoted">&#34;\x00\xff\xfe&#34;</span>`, "bytes that are not UTF-8 show quoted")
	assert.Contains(t, body, `<span class="k-empty">(empty key)</span>`)

	links := regexp.MustCompile(`<td class="key"><a href="([^"]*)">`).FindAllStringSubmatch(body, -1)
	require.Len(t, links, len(oddKeys))
	opened := map[string]bool{}
	for _, l := range links {
		page := f.page(html.UnescapeString(l[1]))
		m := regexp.MustCompile(`value-of-(\d+)`).FindStringSubmatch(page)
		require.NotNil(t, m, "the link %s opens a key with values", l[1])
		opened[m[1]] = true
		assert.NotContains(t, page, "<script>alert")
	}
	assert.Len(t, opened, len(oddKeys), "each link opens its own key")
}

func TestOddKeyAction(t *testing.T) {
	for i, k := range oddKeys {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f := setup(t)
			f.add("jobs", k, "v")
			f.add("jobs", k+"-twin", "v") // a key that a cut or a lost byte would hit
			f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Hold})
			queue := f.page("/queue?queue=jobs&state=held")
			link := regexp.MustCompile(`<td class="key"><a href="([^"]*)">`).FindStringSubmatch(queue)
			require.NotNil(t, link)
			body := f.do(button(t, f.page(html.UnescapeString(link[1])), console.Release), nil)
			assert.True(t, strings.HasPrefix(flash(body), "ok: Released key "), flash(body))
			info, ok, err := f.mem.Key(context.Background(), "jobs", k)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, store.Ready, info.State, "the action reached the key %q", k)
			require.Len(t, f.acts, 1)
			assert.Equal(t, k, f.acts[0].Key, "the authorizer saw the key's bytes")
		})
	}
}
