// Package opconsole mounts pacer's web console in the examples, at /pacer/.
package opconsole

import (
	"errors"
	"net"
	"net/http"
	"net/netip"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// Mount serves on mux, at /pacer/, the console of st and of the Runners
// that keep their state in it. It is read-only unless actions is set;
// then it lets through the actions of clients on this machine (a loopback
// address; a proxy on it makes every client look local): an example's
// stand-in for the authentication a real service puts in Authorize.
func Mount(mux *http.ServeMux, st store.Store, actions bool, runners ...pacer.RunnerView) error {
	cfg := console.Config{Store: st, Runners: runners}
	if actions {
		cfg.Authorize = fromLoopback
	}
	h, err := console.New(cfg)
	if err == nil {
		mux.Handle("/pacer/", http.StripPrefix("/pacer", h))
	}
	return err
}

// fromLoopback allows an action whose client is on this machine.
func fromLoopback(r *http.Request, _ console.Action) error {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() {
		return errors.New("this example allows actions only from this machine")
	}
	return nil
}
