// Package opconsole mounts pacer's web console in the examples, at /pacer/.
package opconsole

import (
	"errors"
	"net/http"
	"net/netip"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// MustMount serves on mux, at /pacer/, the console of st and of runners,
// read-only or, with actions, taking those of clients on this machine (a
// loopback address; behind a proxy on it every client is local): a demo's
// stand-in for the authentication a real service puts in Authorize. It
// panics with console.New's error, a mistake in the wiring (no store).
func MustMount(mux *http.ServeMux, st store.Store, actions bool, runners ...pacer.RunnerView) {
	cfg := console.Config{Store: st, Runners: runners}
	if actions {
		cfg.Authorize = fromLoopback
	}
	h, err := console.New(cfg)
	if err != nil {
		panic(err)
	}
	mux.Handle("/pacer/", http.StripPrefix("/pacer", h))
}

// fromLoopback allows an action whose client is on this machine.
func fromLoopback(r *http.Request, _ console.Action) error {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err != nil || !ap.Addr().Unmap().IsLoopback() {
		return errors.New("this example allows actions only from this machine")
	}
	return nil
}
