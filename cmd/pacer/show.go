package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The tables show keys, values and errors as people can read them and a
// terminal cannot be fooled by them: bytes that are not printable text
// never reach the terminal as they are.

// maxCell is the most runes a table shows of a value or an error; -json
// shows them whole.
const maxCell = 120

// printable reports whether s is UTF-8 made only of printable runes
// (spaces included, tabs and line breaks not), so that a table can show it
// as it is.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// showKey returns how a table shows a key: as it is when it is printable,
// else Go-quoted ("a\tb", "\xff"). The empty key, and a key that starts
// with a double quote, are quoted too, so that what a table shows is what
// an argument takes back (see argKey).
func showKey(k string) string {
	if k == "" || k[0] == '"' || !printable(k) {
		return strconv.Quote(k)
	}
	return k
}

// argKey reads a key, prefix or cursor from the command line: a
// Go-quoted string ("a\tb", as showKey writes it) is unquoted; anything
// else is taken as it is.
func argKey(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// showText returns how a table shows an error or a holder: printable text
// as it is, anything else Go-quoted, and either cut to maxCell runes.
func showText(s string) string {
	if !printable(s) {
		s = strconv.Quote(s)
	}
	return cut(s)
}

// cut shortens s to maxCell runes, ending with "…" when it cut.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxCell {
		return s
	}
	r := []rune(s)
	return string(r[:maxCell-1]) + "…"
}

// The forms in which showValue shows a value.
const (
	asJSON  = "json"
	asText  = "text"
	asHex   = "hex"
	asEmpty = "empty"
)

// showValue returns how a table shows a value's payload (see payload),
// and in which form: as compact JSON when it parses as JSON, as text when
// it is printable UTF-8, else in hex; cut to maxCell runes.
func showValue(p []byte) (form, shown string) {
	switch {
	case len(p) == 0:
		return asEmpty, ""
	case json.Valid(p):
		var b bytes.Buffer
		if json.Compact(&b, p) == nil && printable(b.String()) {
			return asJSON, cut(b.String())
		}
	}
	if printable(string(p)) {
		return asText, cut(string(p))
	}
	return asHex, cut(hex.EncodeToString(p))
}

// showTime returns how a table shows an instant: how long ago (or how
// soon) it is from now, then the instant in RFC 3339, UTC, to the second:
// "3m12s ago (2026-05-01T10:00:00Z)". A zero instant is "-".
func showTime(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	stamp := t.UTC().Format(time.RFC3339)
	d := now.Sub(t)
	switch {
	case d >= 0:
		return fmt.Sprintf("%s ago (%s)", age(d), stamp)
	default:
		return fmt.Sprintf("in %s (%s)", age(-d), stamp)
	}
}

// age writes d in its two largest units, as people read an age: 250ms,
// 42s, 3m12s, 5h07m, 2d03h.
func age(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < day:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%02dh", int(d/day), int(d%day/time.Hour))
	}
}

// joinNotes joins the non-empty notes of a table's last column.
func joinNotes(notes ...string) string {
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 {
		return "-"
	}
	return strings.Join(kept, "; ")
}
