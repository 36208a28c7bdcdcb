// Package redisname is the name encoding of pacer's Redis packages: how a
// Prefix and a name (a queue, a bucket, a namespace of locks) become the
// start of every Redis key of that name, such that two different
// (prefix, name) pairs never start the same key.
//
// KeyPrefix joins its parts with ":" inside braces and appends ":":
// KeyPrefix("pacer", "orders") is "{pacer:orders}:". Each part is escaped
// first: "%" becomes "%25" and ":" becomes "%3A", so that no part holds a
// ":" of its own. A part without either byte is written as it is.
//
// That the encoding is injective rests on three things:
//
//   - the escaping is undone by reading "%25" as "%" and "%3A" as ":", so
//     a part is known from its escaped form;
//   - an escaped part holds no ":", so the ":" between the braces split
//     them back into the parts, and give their number: names of different
//     numbers of parts differ too, which keeps the packages apart (a
//     Store's queues are two parts and its list of queues one, a rate
//     limit's and a lock's three, the second "rate" or "lock");
//   - no part holds a brace, which the callers refuse, so the first "}"
//     of a key ends the braces.
//
// So a key's start up to its first "}" gives back the parts (Parts), and
// what a package appends after KeyPrefix (its own words, and a user's key
// after a word and ":") is kept apart by the package's own rule, which its
// doc states. The braces are the key's hash tag: Redis Cluster hashes only
// what is between them, so every key of one name lives in one slot,
// whatever follows. The tag is never empty ("{}" would make Cluster hash
// the whole key): of two parts or more, it holds a ":", and a name of one
// part must not be empty.
package redisname

import "strings"

// escaper escapes a part: "%" first in meaning, so that an escape is
// never read as the byte it escapes.
var escaper = strings.NewReplacer("%", "%25", ":", "%3A")

// escape returns part with "%" written "%25" and ":" written "%3A".
func escape(part string) string {
	if !strings.ContainsAny(part, "%:") {
		return part
	}
	return escaper.Replace(part)
}

// unescaper undoes escaper.
var unescaper = strings.NewReplacer("%25", "%", "%3A", ":")

// KeyPrefix returns the start of every Redis key of the name that parts
// give: "{", the escaped parts joined by ":", then "}:". It takes one part
// that is not empty, or two parts or more, none with a brace, and panics
// otherwise: the callers refuse a brace with an error that names their
// field.
func KeyPrefix(parts ...string) string {
	if len(parts) == 0 || len(parts) == 1 && parts[0] == "" {
		panic("redisname: KeyPrefix needs one part that is not empty, or more")
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range parts {
		if strings.ContainsAny(p, "{}") {
			panic("redisname: a part has a brace")
		}
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(escape(p))
	}
	b.WriteString("}:")
	return b.String()
}

// Parts returns the parts of the name that key starts with, as KeyPrefix
// took them, and what follows that start; ok is false if key does not
// start as KeyPrefix writes.
func Parts(key string) (parts []string, rest string, ok bool) {
	end := strings.IndexByte(key, '}')
	if !strings.HasPrefix(key, "{") || end < 0 || !strings.HasPrefix(key[end+1:], ":") {
		return nil, "", false
	}
	for _, p := range strings.Split(key[1:end], ":") {
		if strings.ContainsRune(strings.NewReplacer("%25", "", "%3A", "").Replace(p), '%') {
			return nil, "", false // a "%" that escapes nothing
		}
		parts = append(parts, unescaper.Replace(p))
	}
	return parts, key[end+2:], true
}
