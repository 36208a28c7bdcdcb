package main

import (
	"fmt"
	"net/url"
	"strings"
)

// A subscription asks for the events of some types to be delivered to one
// URL. A FIFO subscription gets them strictly one after the other, in the
// order they were published; the others get them concurrently.
type subscription struct {
	Name  string
	URL   string
	Types []string // event types; "*" is every type, "order.*" every type starting with "order."
	FIFO  bool
}

// matches reports whether events of type typ go to s.
func (s subscription) matches(typ string) bool {
	for _, t := range s.Types {
		if t == "*" || t == typ || strings.HasSuffix(t, ".*") && strings.HasPrefix(typ, t[:len(t)-1]) {
			return true
		}
	}
	return false
}

// parseSubscription reads the -sub flag: NAME,URL,TYPES,MODE where TYPES
// is "*" or a |-separated list such as "order.*|invoice.paid", and MODE is
// fifo or concurrent.
func parseSubscription(v string) (subscription, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 4 {
		return subscription{}, fmt.Errorf("-sub %q: want NAME,URL,TYPES,MODE", v)
	}
	s := subscription{Name: parts[0], URL: parts[1], Types: strings.Split(parts[2], "|")}
	if s.Name == "" || strings.ContainsAny(s.Name, "/ ") {
		return subscription{}, fmt.Errorf("-sub %q: NAME must be non-empty, without spaces or slashes", v)
	}
	if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return subscription{}, fmt.Errorf("-sub %q: URL must be an absolute http(s) URL", v)
	}
	for _, t := range s.Types {
		if t == "" {
			return subscription{}, fmt.Errorf("-sub %q: empty event type", v)
		}
	}
	switch parts[3] {
	case "fifo":
		s.FIFO = true
	case "concurrent":
	default:
		return subscription{}, fmt.Errorf("-sub %q: MODE must be fifo or concurrent", v)
	}
	return s, nil
}
