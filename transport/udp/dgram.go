package udp

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"cclab/clock"
	"cclab/netio"
	"cclab/transport"
)

// DgramConn is a transport.DgramConn (datagram mode, docs/dccp.md) with
// blocking calls. Methods are safe for concurrent use.
type DgramConn struct {
	e *Endpoint
	c *transport.DgramConn
}

// DialDgram opens a datagram-mode connection to peer and blocks until the
// handshake completes, the connection fails, or ctx ends.
func (e *Endpoint) DialDgram(ctx context.Context, peer netip.AddrPort, cfg transport.DgramConfig) (*DgramConn, error) {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	if e.l.shut {
		return nil, ErrClosed
	}
	tc, err := e.ep.DialDgram(e.l.now(), peer, cfg)
	if err != nil {
		return nil, err
	}
	e.l.kick()
	if err := e.awaitHandshake(ctx, tc.Established, tc.Done); err != nil {
		tc.Abort(e.l.now())
		return nil, fmt.Errorf("dial %v: %w", peer, err)
	}
	if !tc.Established() {
		return nil, dialError(peer, tc.Err())
	}
	return &DgramConn{e: e, c: tc}, nil
}

// AcceptDgram blocks until a peer opens a datagram-mode connection, ctx
// ends, or the Endpoint closes.
func (e *Endpoint) AcceptDgram(ctx context.Context) (*DgramConn, error) {
	tc, err := acceptNext(ctx, e, e.ep.AcceptDgram)
	if err != nil {
		return nil, err
	}
	return &DgramConn{e: e, c: tc}, nil
}

// ID returns the connection ID (the same at both ends).
func (c *DgramConn) ID() uint64 { return c.c.ID() }

// InitialDCID returns the destination connection ID of the client's
// Initial (the same value at both ends).
func (c *DgramConn) InitialDCID() uint64 { return c.c.InitialDCID() }

// Peer returns the peer's address.
func (c *DgramConn) Peer() netip.AddrPort {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Peer()
}

// Request returns the client's handshake request.
func (c *DgramConn) Request() []byte {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Request()
}

// Do runs f with the Endpoint's lock held and then wakes the writer.
func (c *DgramConn) Do(f func(now clock.Time, tc *transport.DgramConn)) {
	c.e.l.mu.Lock()
	f(c.e.l.now(), c.c)
	c.e.l.mu.Unlock()
	c.e.l.kick()
}

// Stats returns the connection's counters.
func (c *DgramConn) Stats() transport.DgramStats {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Stats()
}

// Send queues one datagram without blocking (a full send queue drops by
// the configured policy); false if the connection is not open or p is
// larger than MaxPayload.
func (c *DgramConn) Send(p []byte) bool {
	c.e.l.mu.Lock()
	ok := c.c.Send(c.e.l.now(), p)
	c.e.l.mu.Unlock()
	c.e.l.kick()
	return ok
}

// Recv blocks until a datagram arrives and copies it into p; it returns
// the arrival instant (Endpoint time), and io.EOF once the connection has
// ended and every datagram was read (the connection's error if it failed).
func (c *DgramConn) Recv(ctx context.Context, p []byte) (int, clock.Time, error) {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	var n int
	var at clock.Time
	var ok bool
	err := c.e.wait(ctx, func() bool {
		n, at, ok = c.c.RecvAt(p)
		return ok || c.c.Done()
	})
	if err != nil {
		return 0, clock.Never, err
	}
	if ok {
		return n, at, nil
	}
	if e := c.c.Err(); e != nil {
		return 0, clock.Never, e
	}
	return 0, clock.Never, io.EOF
}

// RecvFunc calls f with every datagram as it arrives (and its arrival
// instant, Endpoint time) until the connection ends; it returns nil at the
// peer's orderly close once every datagram was passed to f, the
// connection's error if it failed, or ctx's or ErrClosed. f runs on the
// driver's goroutine with the Endpoint's lock held, right after the batch
// that brought the datagrams: it must be quick, must not block and must not
// call the Endpoint or its connections, and p is valid only during the call.
// Unlike a Recv loop, which the driver wakes for every batch, the caller's
// goroutine sleeps until the connection ends: no goroutine hand-off per
// batch.
func (c *DgramConn) RecvFunc(ctx context.Context, f func(at clock.Time, p []byte)) error {
	buf := make([]byte, netio.MaxDatagram)
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	err := c.e.wait(ctx, func() bool {
		for {
			n, at, ok := c.c.RecvAt(buf)
			if !ok {
				return c.c.Done()
			}
			f(at, buf[:n])
		}
	})
	if err != nil {
		return err
	}
	return c.c.Err()
}

// Close sends the queued datagrams, closes the connection (CLOSE/RESET)
// and waits until it has ended or ctx ends.
func (c *DgramConn) Close(ctx context.Context) error {
	c.Do(func(now clock.Time, tc *transport.DgramConn) { tc.Close(now) })
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	err := c.e.wait(ctx, c.c.Done)
	if err != nil {
		c.c.Abort(c.e.l.now())
		c.e.l.kick()
		return err
	}
	return c.c.Err()
}

// Abort ends the connection at once.
func (c *DgramConn) Abort() {
	c.Do(func(now clock.Time, tc *transport.DgramConn) { tc.Abort(now) })
}

// Wait blocks until the connection has ended or ctx ends.
func (c *DgramConn) Wait(ctx context.Context) error {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	if err := c.e.wait(ctx, c.c.Done); err != nil {
		return err
	}
	return c.c.Err()
}
