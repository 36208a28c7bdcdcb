package redistest

import (
	"math/rand/v2"
	"strings"
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

// RandomPart returns a random component of a Redis name, such as a
// Prefix, a queue or a key, for property tests of the name encoding:
// empty one time in eight, long (up to 64 KiB) one time in 64, else of
// up to 12 bytes; each byte one of tricky half the time, else any byte
// but a brace, which the packages refuse.
func RandomPart(r *rand.Rand) string {
	var n int
	switch r.IntN(64) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return ""
	case 8:
		n = 1 + r.IntN(64<<10)
	default:
		n = 1 + r.IntN(12)
	}
	b := make([]byte, n)
	for i := range b {
		if r.IntN(2) == 0 {
			b[i] = tricky[r.IntN(len(tricky))]
			continue
		}
		for {
			c := byte(r.IntN(256))
			if c != '{' && c != '}' {
				b[i] = c
				break
			}
		}
	}
	return string(b)
}
