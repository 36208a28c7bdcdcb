package redisfn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeFunction is the short name of the function that every library
// holds for Check: it returns 1 and touches nothing.
const probeFunction = "probe"

// Check makes sure that c's server can run the library, and loads it
// there (into every master of a cluster), so that a constructor fails at
// once, with an error that starts with the server's address and says what
// is missing, rather than at the first call. The server must:
//
//   - be reachable: Check dials it once, with the client's own dialer, and
//     waits for a reply to PING, so that a wrong address fails at that
//     dial rather than after go-redis' retries (about 1.7 s by default),
//     and a server that does not answer fails at ctx's deadline, or the
//     client's ReadTimeout if that comes first; then it must answer PING
//     through the client, with its credentials;
//   - be Redis 7.0 or later, by the version HELLO reports (which no ACL
//     refuses, where INFO needs @dangerous); a server whose HELLO tells
//     no version is judged by whether it runs the functions;
//   - let the client's user load the library (FUNCTION LOAD) and call its
//     functions (FCALL).
//
// The commands through the client wait for their replies as its options
// say (ReadTimeout, or ctx too with ContextTimeoutEnabled); ctx bounds
// their retries. A client that is neither a *redis.Client nor a
// *redis.ClusterClient is checked by its commands alone, and named by its
// type.
func (l *Library) Check(ctx context.Context, c redis.UniversalClient) error {
	addr, err := reach(ctx, c)
	if err != nil {
		return fmt.Errorf("%s: not reachable: %w", addr, err)
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			return l.checkServer(ctx, m.Options().Addr, m)
		})
	}
	return l.checkServer(ctx, addr, c)
}

// reach returns the address of c's server (a cluster's seeds, joined by
// ","), and an error if it does not answer (no seed does). A kind of
// client whose options it cannot read is named by its type, and left to
// its commands.
func reach(ctx context.Context, c redis.UniversalClient) (string, error) {
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		return o.Addr, answers(ctx, o.Dialer, o.Network, o.Addr, o.ReadTimeout)
	case *redis.ClusterClient:
		o := c.Options()
		dialer := o.Dialer
		if dialer == nil { // the cluster's nodes each make go-redis' own
			dialer = redis.NewDialer(&redis.Options{DialTimeout: o.DialTimeout, TLSConfig: o.TLSConfig})
		}
		var errs []error
		for _, a := range o.Addrs {
			err := answers(ctx, dialer, "tcp", a, o.ReadTimeout)
			if err == nil {
				return strings.Join(o.Addrs, ","), nil
			}
			errs = append(errs, err)
		}
		return strings.Join(o.Addrs, ","), errors.Join(errs...)
	default:
		return fmt.Sprintf("%T", c), nil
	}
}

// answers dials addr once with dialer and sends PING, inline, on the
// connection: any reply, a PONG or an error (such as NOAUTH, as the
// connection has not logged in), says that a server answers. It waits
// until ctx ends, or for wait if that is positive and comes first.
func answers(ctx context.Context, dialer func(context.Context, string, string) (net.Conn, error), network, addr string, wait time.Duration) error {
	conn, err := dialer(ctx, network, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if wait > 0 {
		_ = conn.SetDeadline(time.Now().Add(wait))
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return fmt.Errorf("sending PING: %w", err)
	}
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return fmt.Errorf("no reply to PING: %w", err)
	}
	if first[0] != '+' && first[0] != '-' {
		return fmt.Errorf("a reply to PING that is not Redis's, starting %q", first[:])
	}
	return nil
}

// checkServer checks one server, named addr in the errors.
func (l *Library) checkServer(ctx context.Context, addr string, c redis.UniversalClient) error {
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%s: not reachable: %w", addr, err)
	}
	v, err := serverVersion(ctx, c)
	switch {
	case errors.Is(err, errNoHello):
		return fmt.Errorf("%s: Redis before 6.0 (no HELLO): 7.0 or later is needed, for functions", addr)
	case err == nil && !atLeast7(v):
		return fmt.Errorf("%s: Redis %s: 7.0 or later is needed, for functions", addr, v)
	}
	// An unknown version: the functions tell.
	if err := l.load(ctx, c); err != nil {
		if unknownCommand(err) {
			return fmt.Errorf("%s: no FUNCTION command: Redis 7.0 or later is needed: %w", addr, err)
		}
		return fmt.Errorf("%s: cannot load the function library (FUNCTION LOAD): %w", addr, err)
	}
	if err := c.FCall(ctx, l.Function(probeFunction), nil).Err(); err != nil {
		return fmt.Errorf("%s: cannot call the library's functions (FCALL): %w", addr, err)
	}
	return nil
}

// errNoHello is serverVersion's error for a server that has no HELLO.
var errNoHello = errors.New("no HELLO command")

// serverVersion returns the server's version, from HELLO, which every
// user may run and which, without arguments, leaves the connection's
// protocol as it is.
func serverVersion(ctx context.Context, c redis.UniversalClient) (string, error) {
	reply, err := c.Do(ctx, "hello").Result()
	if err != nil {
		if unknownCommand(err) {
			return "", errNoHello
		}
		return "", err
	}
	return helloVersion(reply)
}

// helloVersion returns the "version" of HELLO's reply: a map in RESP3, a
// list of names and values in RESP2.
func helloVersion(reply any) (string, error) {
	switch r := reply.(type) {
	case map[any]any:
		if v, ok := r["version"].(string); ok {
			return v, nil
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if r[i] == "version" {
				if v, ok := r[i+1].(string); ok {
					return v, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no version in HELLO's reply %v", reply)
}

// atLeast7 reports whether version, "major.minor.patch", is 7.0 or later.
// A version it cannot read counts as new enough: the functions then tell.
func atLeast7(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	return err != nil || n >= 7
}

func unknownCommand(err error) bool {
	return strings.Contains(err.Error(), "unknown command")
}
