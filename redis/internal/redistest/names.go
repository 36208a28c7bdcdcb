package redistest

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// HashTag returns the part of key that Redis Cluster hashes to choose its
// slot: what is between its first "{" and the first "}" after it, if that
// is not empty; else the whole key.
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// tricky are the bytes that a name encoding must tell apart from what
// it writes: its separator, its escape and the escapes' own bytes.
const tricky = ":%3Aa25"

// tokens are what RandomPart and RandomPairs build most parts of:
// tricky's bytes, and the words that the packages write between and
// after the parts, so that a part often looks like several, or like a
// key's suffix.
var tokens = []string{":", "%", "3A", "25", "a", ":rate:", ":lock:", "tat", "pause:", "k:", "ready", "}:", "{"}

// RandomPairs returns pairs of parts, such as a Prefix and a name, which
// the plain join of the two with any separator names alike: every
// (u[:i], u[j:]) with i <= j of a random u of up to 6 tokens, without
// braces, so that u[i:j], what comes between, may be any separator.
func RandomPairs(r *rand.Rand) [][2]string {
	var b strings.Builder
	for range 1 + r.IntN(6) {
		b.WriteString(tokens[r.IntN(len(tokens))])
	}
	u := noBraces(b.String(), false)
	var pairs [][2]string
	for i := 0; i <= len(u); i++ {
		for j := i; j <= len(u); j++ {
			pairs = append(pairs, [2]string{u[:i], u[j:]})
		}
	}
	return pairs
}

// RandomPart returns a random component of a Redis name, such as a
// Prefix, a queue or a key, for property tests of the name encoding:
// empty one time in eight; long (up to 64 KiB) one time in 64; half the
// time up to 5 tokens; else up to 12 bytes, each one of tricky half the
// time, else any byte. It holds no brace, which the packages refuse in
// a Prefix or a name, unless braces is true (a key may hold them).
func RandomPart(r *rand.Rand, braces bool) string {
	var n int
	switch r.IntN(64) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return ""
	case 8:
		n = 1 + r.IntN(64<<10)
	default:
		if r.IntN(2) == 0 {
			var b strings.Builder
			for range 1 + r.IntN(5) {
				b.WriteString(tokens[r.IntN(len(tokens))])
			}
			return noBraces(b.String(), braces)
		}
		n = 1 + r.IntN(12)
	}
	b := make([]byte, n)
	for i := range b {
		if r.IntN(2) == 0 {
			b[i] = tricky[r.IntN(len(tricky))]
		} else {
			b[i] = byte(r.IntN(256))
		}
	}
	return noBraces(string(b), braces)
}

// noBraces returns s without its braces, unless keep is true.
func noBraces(s string, keep bool) string {
	if keep {
		return s
	}
	return strings.NewReplacer("{", "", "}", "").Replace(s)
}

// A NameSet holds Redis names and what each names, to fail a test when
// two different things get the same name. It keeps hashes, so that
// property tests of long names stay small.
type NameSet struct {
	tb    testing.TB
	names map[[32]byte][32]byte
}

// NewNameSet returns an empty NameSet that fails tb.
func NewNameSet(tb testing.TB) *NameSet {
	return &NameSet{tb: tb, names: map[[32]byte][32]byte{}}
}

// Add records that name names what owner gives (its parts, in order),
// and fails the test if name already named something else.
func (s *NameSet) Add(name string, owner ...string) {
	s.tb.Helper()
	n := sha256.Sum256([]byte(name))
	h := sha256.New()
	for _, part := range owner { // each after its length, so the parts stay apart
		h.Write(strconv.AppendInt(nil, int64(len(part)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	var o [32]byte
	h.Sum(o[:0])
	if other, ok := s.names[n]; ok && other != o {
		s.tb.Fatalf("two things are named %.200q, one of them %.200q", name, owner)
	}
	s.names[n] = o
}

// ForNames calls add with (prefix, name, key) triples for a property test
// of a name encoding: rounds of RandomPairs, whose plain joins collide,
// and as many again of random parts, under a seed it logs. A key may hold
// braces; a prefix and a name never do.
func ForNames(t *testing.T, rounds int, add func(prefix, name, key string)) {
	t.Helper()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for range rounds {
		for _, p := range RandomPairs(r) {
			add(p[0], p[1], RandomPart(r, true))
		}
	}
	for range 10 * rounds {
		add(RandomPart(r, false), RandomPart(r, false), RandomPart(r, true))
	}
}
