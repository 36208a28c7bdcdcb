package console

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// Config configures the console. Store is required; the zero value of
// every other field is a working default.
type Config struct {
	// Store is what the console shows and steers. It uses the optional
	// interfaces the store implements: store.Inspector to list queues,
	// keys and values, store.Operator for the pause, resume, retry and
	// drop actions, store.DeadLetters for the dead letters; a page says
	// so when the store lacks the one it needs.
	Store store.Store
	// Runners are views of the Runners that use Store, one per queue at
	// most. A queue of a Runner shows its keys and values decoded by the
	// view and the view's Explain (which knows the Runner's own limits),
	// and is listed in the overview even while it holds nothing. The
	// values of other queues show as JSON when they parse as JSON, as
	// text when they are printable UTF-8, and in hex otherwise, with the
	// explanation of pacer.ExplainStored. The default is none.
	Runners []pacer.RunnerView
	// Authorize decides each action, with the POST request that asks for
	// it (whose context, headers and client certificate say who asks):
	// nil lets it through, an error refuses it and is shown to the
	// operator. It is called for every action after the cross-site
	// checks, and never for a page view. The default, nil, makes the
	// console read-only: every action is refused and no page shows the
	// buttons.
	Authorize func(r *http.Request, a Action) error
	// CSRFKey signs the token of every action form, binding it to a
	// cookie of the operator's browser. Replicas of a service behind one
	// load balancer must share a key of at least 32 bytes. The default,
	// nil, is a random key per New: forms from before a restart are then
	// refused once, and a reload fixes them.
	CSRFKey []byte
	// Now is the clock of the relative ages the pages show ("3m ago")
	// and of Purge's age. The default is time.Now.
	Now func() time.Time
}

// minCSRFKey is the shortest Config.CSRFKey accepted.
const minCSRFKey = 32

// validate checks cfg and names the first bad field.
func (cfg *Config) validate() error {
	if cfg.Store == nil {
		return errors.New("console: Config.Store is nil")
	}
	if cfg.CSRFKey != nil && len(cfg.CSRFKey) < minCSRFKey {
		return fmt.Errorf("console: Config.CSRFKey has %d bytes, want at least %d", len(cfg.CSRFKey), minCSRFKey)
	}
	seen := make(map[string]int, len(cfg.Runners))
	for i, r := range cfg.Runners {
		if r == nil {
			return fmt.Errorf("console: Config.Runners[%d] is nil", i)
		}
		q := r.Queue()
		if r.Store() == nil {
			return fmt.Errorf("console: Config.Runners[%d] (queue %q) keeps its state in its process, not in a store the console can read", i, q)
		}
		if j, dup := seen[q]; dup {
			return fmt.Errorf("console: Config.Runners[%d] and Config.Runners[%d] both have queue %q", j, i, q)
		}
		seen[q] = i
	}
	return nil
}
