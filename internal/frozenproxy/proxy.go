// Package frozenproxy is a TCP proxy that a test freezes to cut a client
// off from its server as a network partition does: Freeze keeps every
// connection open, the client's and the server's, and stops forwarding
// bytes, so that the client's reads wait and no end of connection comes
// (no FIN, no RST). Connections accepted after Freeze stay silent too.
// Close ends the partition with a reset: it closes every connection and
// the listener, which ends the calls that waited on a frozen connection.
//
// It is test support only: it imports testing and testify, and only
// store/storetest's RunPartition, which tests run, imports it.
package frozenproxy

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Proxy forwards the connections made to its address to a target
// address, until frozen. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener

	frozen, closed        chan struct{}
	freezeOnce, closeOnce sync.Once
	mu                    sync.Mutex
	conns                 []net.Conn // every connection, both ends
	wg                    sync.WaitGroup
}

// Start starts a Proxy to target on a spare port of 127.0.0.1, closed when
// tb ends.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	p := &Proxy{target: target, ln: ln, frozen: make(chan struct{}), closed: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's address, host:port, for the client.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Freeze stops forwarding bytes on every connection, and keeps them open
// until Close. Bytes read after Freeze are never delivered.
func (p *Proxy) Freeze() { p.freezeOnce.Do(func() { close(p.frozen) }) }

// Close closes the listener and every connection, and waits for the
// proxy's goroutines. It is idempotent.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		close(p.closed)
		_ = p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(client) {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// track records c for Close, or closes it and reports false if the proxy
// is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
		_ = c.Close()
		return false
	default:
	}
	p.conns = append(p.conns, c)
	return true
}

// serve connects client to the target and forwards both ways; once
// frozen, it only holds the connections.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	select {
	case <-p.frozen:
		<-p.closed
		return
	default:
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(server) {
		_ = client.Close()
		return
	}
	p.wg.Add(2)
	go p.forward(server, client)
	go p.forward(client, server)
}

// forward copies from src to dst until either ends, or the proxy is
// frozen: it then holds what it read, and both connections, until Close.
func (p *Proxy) forward(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.frozen:
			<-p.closed
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			// One end closed: the proxy closes the other, as a
			// connection through it would end.
			_ = dst.Close()
			_ = src.Close()
			return
		}
	}
}
