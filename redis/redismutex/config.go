package redismutex

import (
	"fmt"
	"strings"
	"time"
)

const (
	// DefaultTTL is the TTL of a Config that leaves it zero.
	DefaultTTL = 10 * time.Second

	// MinTTL is the shortest TTL: renewals every TTL/3 need a few
	// milliseconds, Redis' unit of expiry.
	MinTTL = 10 * time.Millisecond

	// DefaultPrefix is the Prefix of a Config that leaves it empty.
	DefaultPrefix = "pacer"
)

// Config configures a Locker. Name is required; the other fields have
// defaults.
type Config struct {
	// TTL is the lease of a held lock: Redis deletes a lock that was not
	// renewed for TTL, so a crashed holder blocks the key for at most
	// that long. A Locker renews each lock it holds every TTL/3, and
	// considers a lock lost once it could not renew it for TTL minus a
	// safety margin of TTL/10 (see the package doc). It is rounded down
	// to whole milliseconds and must be at least MinTTL. The default
	// value is DefaultTTL.
	TTL time.Duration

	// Prefix starts the name of every Redis key of the Locker: the keys
	// of a Name are "{Prefix:lock:Name}:...", in the name encoding of the
	// package doc, so that they share one hash slot, and Lockers of
	// different Prefix or Name share none, whatever bytes they hold. It
	// must not contain a brace. The default value is DefaultPrefix.
	Prefix string

	// Name is the namespace of the Locker's locks, such as "accounts":
	// Lockers with the same Prefix and Name lock the same keys. It is
	// required and must not contain a brace.
	Name string
}

// withDefaults returns c with its zero fields set to their defaults, or an
// error naming the first field that is not valid.
func (c Config) withDefaults() (Config, error) {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	c.TTL = c.TTL.Truncate(time.Millisecond)
	if c.TTL < MinTTL {
		return c, fmt.Errorf("redismutex: Config.TTL must be at least %v, got %v", MinTTL, c.TTL)
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		return c, fmt.Errorf("redismutex: Config.Prefix %q has a brace, which would break the hash tag", c.Prefix)
	}
	if c.Name == "" {
		return c, fmt.Errorf("redismutex: Config.Name is required")
	}
	if strings.ContainsAny(c.Name, "{}") {
		return c, fmt.Errorf("redismutex: Config.Name %q has a brace, which would break the hash tag", c.Name)
	}
	return c, nil
}
