package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// The handshake gate, and handle, which runs a control connection through it.

// hsGate admits control connections to their handshake (docs/security.md,
// "Agent control connections"): at most max at once, at most perSource of
// them from one source address, and when every slot is taken a connection
// waits (at most perSource of each source, until its handshake deadline)
// and freed slots go to the waiting sources in turn (round robin), so one
// source holding its share of slots with silent connections (slowloris)
// cannot starve the others.
type hsGate struct {
	mu        sync.Mutex
	max       int
	perSource int
	active    int
	bySource  map[netip.Addr]int             // handshakes in progress per source
	waiting   map[netip.Addr][]chan struct{} // queued connections per source, oldest first
	order     []netip.Addr                   // sources with queued connections, in turn order
	onQueue   func()                         // tests: called once a connection is queued
}

func newHSGate(max, perSource int) *hsGate {
	return &hsGate{max: max, perSource: perSource, bySource: map[netip.Addr]int{}, waiting: map[netip.Addr][]chan struct{}{}}
}

// errHSBusy wraps the gate's refusals.
var errHSBusy = errors.New("busy")

// sourceOf returns a connection's source address (the zero Addr if it has
// none, as an in-memory pipe in tests: those share one count).
func sourceOf(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// acquire takes a handshake slot for a connection from src, waiting for one
// until deadline or ctx's end. The error (wrapping errHSBusy) says which
// bound refused it.
func (g *hsGate) acquire(ctx context.Context, src netip.Addr, deadline time.Time) error {
	g.mu.Lock()
	if g.bySource[src] >= g.perSource {
		g.mu.Unlock()
		return fmt.Errorf("%w: %d handshakes from %v already in progress (-max-handshakes-per-source)", errHSBusy, g.perSource, src)
	}
	if g.active < g.max && len(g.waiting[src]) == 0 {
		g.take(src)
		g.mu.Unlock()
		return nil
	}
	if len(g.waiting[src]) >= g.perSource {
		g.mu.Unlock()
		return fmt.Errorf("%w: %d handshakes in progress (-max-handshakes) and %d more from %v waiting", errHSBusy, g.max, g.perSource, src)
	}
	ch := make(chan struct{})
	if len(g.waiting[src]) == 0 {
		g.order = append(g.order, src)
	}
	g.waiting[src] = append(g.waiting[src], ch)
	g.mu.Unlock()
	if g.onQueue != nil {
		g.onQueue()
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-ch: // granted while timing out: the slot is ours
		return nil
	default:
	}
	g.dequeue(src, ch)
	return fmt.Errorf("%w: no handshake slot came free before the handshake deadline (-max-handshakes %d)", errHSBusy, g.max)
}

// take counts a slot for src (g.mu held).
func (g *hsGate) take(src netip.Addr) {
	g.active++
	g.bySource[src]++
}

// dequeue removes waiter ch of src (g.mu held).
func (g *hsGate) dequeue(src netip.Addr, ch chan struct{}) {
	q := g.waiting[src]
	for i, w := range q {
		if w == ch {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		g.waiting[src] = q
		return
	}
	delete(g.waiting, src)
	for i, a := range g.order {
		if a == src {
			g.order = append(g.order[:i], g.order[i+1:]...)
			break
		}
	}
}

// release frees src's slot and hands free slots to waiting sources in
// turn, skipping a source at its per-source bound.
func (g *hsGate) release(src netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.bySource[src]--; g.bySource[src] <= 0 {
		delete(g.bySource, src)
	}
	for n := len(g.order); g.active < g.max && n > 0; n-- {
		a := g.order[0]
		g.order = append(g.order[1:], a) // its turn is over, granted or not
		if g.bySource[a] >= g.perSource {
			continue
		}
		ch := g.waiting[a][0]
		g.dequeue(a, ch)
		g.take(a)
		close(ch)
		n = len(g.order) + 1 // another round over those still waiting
	}
}

// inProgress returns the handshakes in progress.
func (g *hsGate) inProgress() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active
}

// refuseBusy tells a connection over a bound why and closes it.
func (s *Server) refuseBusy(c net.Conn, msg string) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	_ = writeFrame(c, &message{Type: tError, Code: codeRefused, Error: msg})
	c.Close()
}

// handle authenticates a control connection (TLS, then the cclab handshake
// bound to the TLS session, both within handshakeTimeout) and serves its
// requests.
func (s *Server) handle(ctx context.Context, raw net.Conn) {
	// The wait for a slot counts in the handshake's deadline.
	deadline := time.Now().Add(handshakeTimeout)
	src := sourceOf(raw)
	if err := s.handshakes.acquire(ctx, src, deadline); err != nil {
		s.count(func(st *Stats) { st.Busy++ })
		s.refuseBusy(raw, err.Error())
		return
	}
	raw.SetDeadline(deadline)
	fb := &firstBytes{Conn: raw}
	c := tls.Server(fb, s.tls)
	name, err := s.authenticate(ctx, c, fb)
	s.handshakes.release(src)
	if err != nil {
		switch {
		case errors.Is(err, errOldProtocol):
		case errors.Is(err, errTLS):
			s.count(func(st *Stats) { st.HandshakeFailed++ })
			s.logf("handshake with %v failed: %v", c.RemoteAddr(), err)
		case isUnauthorized(err):
			s.count(func(st *Stats) { st.Unauthorized++ })
			s.logf("refused %v: %v", c.RemoteAddr(), err)
			_ = writeFrame(c, &message{Type: tError, Code: codeUnauthorized, Error: err.Error()})
		default:
			s.count(func(st *Stats) { st.HandshakeFailed++ })
			s.logf("handshake with %v failed: %v", c.RemoteAddr(), err)
			_ = writeFrame(c, &message{Type: tError, Code: codeBad, Error: err.Error()})
		}
		return
	}
	if err := writeFrame(c, &message{Type: tOK, Name: name}); err != nil {
		s.count(func(st *Stats) { st.HandshakeFailed++ })
		return
	}
	raw.SetDeadline(time.Time{})
	s.count(func(st *Stats) { st.Authenticated++ })
	s.logf("%v authenticated as %q", c.RemoteAddr(), name)
	sess := &session{s: s, conn: c, peer: name, reqs: map[uint64]context.CancelFunc{}}
	sess.serve(ctx)
}

// errTLS marks a failed TLS handshake (counted as HandshakeFailed, no
// error message: the peer speaks no TLS we could answer in).
var errTLS = errors.New("TLS handshake")
