package pgstore

import (
	"fmt"
	"regexp"
	"time"
)

// Config configures a Store. The zero value is ready to use.
type Config struct {
	// Schema is the PostgreSQL schema that holds the store's tables, made
	// by New if missing. It belongs to the store: give it a schema of its
	// own, which no other code creates tables in. Stores (and Runners)
	// with different schemas never see each other's state; stores with
	// the same schema share it, which is how several processes serve one
	// set of queues. It must be an identifier: a letter or underscore,
	// then letters, digits or underscores, 55 bytes at most (the channel
	// name of its notifications adds 8 to PostgreSQL's limit of 63). It is
	// quoted, so case matters. The default value is "pacer".
	Schema string

	// PollInterval is how often a Store looks at the queues its Waits
	// sleep on, in one statement for all of them on its listening
	// connection, and wakes those that have a key ready or due.
	// Notifications wake Waits at once; PollInterval bounds how late a
	// lost notification (a process that died before it sent one, a burst
	// that moved earlier) makes work, and sets what an idle Store costs
	// the server: one statement per PollInterval. The default value is 2
	// seconds.
	PollInterval time.Duration
}

// The defaults of Config.
const (
	DefaultSchema       = "pacer"
	DefaultPollInterval = 2 * time.Second
)

// channelSuffix makes a schema's name the name of its notification
// channel.
const channelSuffix = "_changes"

// maxSchema is the longest Config.Schema, so that the channel name fits
// PostgreSQL's identifiers.
const maxSchema = 63 - len(channelSuffix)

// identifier is what Config.Schema must look like.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// withDefaults returns cfg with its defaults applied, or an error naming
// the field that is wrong.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	if !identifier.MatchString(cfg.Schema) || len(cfg.Schema) > maxSchema {
		return cfg, fmt.Errorf("pgstore: Config.Schema %q is not an identifier of at most %d bytes (a letter or _, then letters, digits or _)", cfg.Schema, maxSchema)
	}
	switch {
	case cfg.PollInterval < 0:
		return cfg, fmt.Errorf("pgstore: Config.PollInterval must be >= 0, got %v", cfg.PollInterval)
	case cfg.PollInterval == 0:
		cfg.PollInterval = DefaultPollInterval
	}
	return cfg, nil
}
