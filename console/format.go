package console

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

// moment is an instant as the pages show it: relative to the page's
// instant, with the absolute time on hover.
type moment struct {
	Zero     bool
	Relative string // "3m ago", "in 12s"
	Absolute string // in UTC, to the millisecond
	ISO      string // RFC 3339, for the datetime attribute
}

func momentOf(t, now time.Time) moment {
	if t.IsZero() {
		return moment{Zero: true}
	}
	return moment{
		Relative: relative(t, now),
		Absolute: t.UTC().Format("2006-01-02 15:04:05.000 UTC"),
		ISO:      t.UTC().Format(time.RFC3339Nano),
	}
}

// relative says how far t is from now in its largest unit.
func relative(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		s = fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// Display limits: what a page shows of one key or value, so that a key
// or value of megabytes keeps the page light.
const (
	keyShownInTable = 120  // runes of a key in a table
	keyShown        = 2000 // runes of a key on its own page
	valueShown      = 4096 // bytes of a value's text
	hexShown        = 512  // bytes of a value in hex
)

// keyText is a key as a page shows it.
type keyText struct {
	Text   string
	Quoted bool // shown as a Go string literal: not printable as it is
	Empty  bool
	Cut    bool // shortened
	Bytes  int
}

// formatKey shows key as the queue's Runner formats it, or, without one,
// as it is when it is printable UTF-8 and quoted otherwise, cut to at
// most limit runes.
func (c *console) formatKey(queue, key string, limit int) keyText {
	k := keyText{Bytes: len(key), Empty: key == ""}
	switch rv, ok := c.runners[queue]; {
	case ok:
		k.Text = rv.FormatKey(key)
	case printable(key):
		k.Text = key
	default:
		k.Text, k.Quoted = strconv.Quote(key), true
	}
	k.Text, k.Cut = cutRunes(k.Text, limit)
	return k
}

// printable reports whether s is UTF-8 that reads as it is: no control
// characters (but for tabs and line breaks) and no invalid bytes.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// cutRunes shortens s to at most n runes.
func cutRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

// valueText is a value as a page shows it.
type valueText struct {
	Kind  string // "decoded", "json", "text", "hex" or "empty"
	Text  string
	Bytes int  // of the payload, without a trace-context frame
	Cut   bool // Text shows only the first bytes
}

// formatValue shows a stored value of queue: decoded by the queue's
// Runner, or else as JSON, text or hex, whichever it reads as.
func (c *console) formatValue(queue string, stored []byte) valueText {
	b := stripTrace(stored)
	v := valueText{Bytes: len(b)}
	if rv, ok := c.runners[queue]; ok {
		v.Kind = "decoded"
		// The stored bytes: the Runner reads the frame as its leases do.
		v.Text, v.Cut = cutBytes(rv.FormatValue(stored), valueShown)
		return v
	}
	switch {
	case len(b) == 0:
		v.Kind = "empty"
	case json.Valid(b):
		v.Kind = "json"
		var buf bytes.Buffer
		if len(b) <= valueShown && json.Indent(&buf, b, "", "  ") == nil {
			v.Text = buf.String()
		} else {
			v.Text, v.Cut = cutBytes(string(b), valueShown)
		}
	case printable(string(b)):
		v.Kind = "text"
		v.Text, v.Cut = cutBytes(string(b), valueShown)
	default:
		v.Kind = "hex"
		v.Text = strings.TrimRight(hex.Dump(b[:min(len(b), hexShown)]), "\n")
		v.Cut = len(b) > hexShown
	}
	return v
}

// cutBytes shortens s to at most n bytes, at a rune boundary.
func cutBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
