package redisstore

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the Prefix of a Config that leaves it empty.
const DefaultPrefix = "pacer"

// Config configures a Store. The zero value is ready to use.
type Config struct {
	// Prefix starts the name of every Redis key of the Store: a queue's
	// keys are named "{Prefix:queue}:...", in the name encoding of the
	// package doc, so that they share one hash slot. Two Stores with
	// different prefixes share nothing, whatever bytes the prefixes and
	// queue names hold. It must not contain a brace. The default value is
	// DefaultPrefix.
	Prefix string
}

// withDefaults returns c with its zero fields set to their defaults, or an
// error naming the first field that is not valid.
func (c Config) withDefaults() (Config, error) {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		return c, fmt.Errorf("redisstore: Config.Prefix %q has a brace, which would break the hash tag", c.Prefix)
	}
	return c, nil
}
