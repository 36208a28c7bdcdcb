package redisstore

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// suffixes returns what the Store appends to a queue's start: the words
// that name the queue's own keys, and the forms ("k:") that a key, a dead
// letter's id or a Wait's id follows; read from the functions (PFX ..
// 'word' in lua/), and from the Go code (the key's hash, a Wait's own
// key).
func suffixes(t *testing.T) (words, forms []string) {
	t.Helper()
	re := regexp.MustCompile(`PFX \.\. '([^']*)'`)
	forms = []string{"k:", "v:", "w:"} // queue.hash and queue.values, and Wait's own key (wait.go)
	files, err := fs.Glob(luaFiles, "lua/*.lua")
	require.NoError(t, err)
	for _, f := range files {
		src, err := luaFiles.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if strings.Contains(m[1], ":") {
				forms = append(forms, m[1])
			} else {
				words = append(words, m[1])
			}
		}
	}
	slices.Sort(words)
	slices.Sort(forms)
	return slices.Compact(words), slices.Compact(forms)
}

// A queue's names are told apart by the first ":" after its start: the
// words have none, and each form is a word and one ":". So the names of
// a Store of any Prefix, queue and key (with ":", "%", the package's
// words, empty or long, a key with braces too) are never another queue's
// or key's, nor a Store's registry of queues, and those of one queue
// share one hash tag.
func TestNamesNeverCollide(t *testing.T) {
	words, forms := suffixes(t)
	require.Contains(t, words, "ready")
	require.Contains(t, forms, "v:")
	for _, f := range forms {
		require.Regexp(t, `^[a-z]+:$`, f)
	}
	q := newQueue("P", "q")
	for _, own := range [][]string{q.ready, q.dead, q.add, q.keys, {q.wake}} {
		for _, n := range own {
			require.Contains(t, words, strings.TrimPrefix(n, q.prefix), "a name the Go code gives")
		}
	}

	names := redistest.NewNameSet(t)
	redistest.ForNames(t, 50, func(prefix, name, key string) {
		t.Helper()
		q := newQueue(prefix, name)
		tag := redistest.HashTag(q.prefix)
		if prefix != "" {
			names.Add(registryName(prefix), prefix)
		}
		for _, w := range words {
			names.Add(q.prefix+w, prefix, name, w)
		}
		for _, f := range forms {
			n := q.prefix + f + key
			switch f {
			case "k:":
				n = q.hash(key)[0]
			case "v:":
				n = q.values(key)[0]
			}
			names.Add(n, prefix, name, f, key)
			require.Equal(t, tag, redistest.HashTag(n))
		}
	})
}
