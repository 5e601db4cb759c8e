package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrUnauthorized is wrapped by Dial's error when the agent refused this
// side's credentials, or could not prove its own (a wrong key, an unknown
// agent).
var ErrUnauthorized = errors.New("unauthorized")

// ErrBusy is wrapped by Dial's error when the agent refused the connection
// at once for being over its -max-conns or -max-handshakes: a later dial
// may succeed.
var ErrBusy = errors.New("agent busy")

// ErrClosed is wrapped by a request's error when the control connection is
// gone (Close, the agent stopped or vanished).
var ErrClosed = errors.New("control connection closed")

// RemoteError is an agent's refusal or failure report for one request.
type RemoteError struct {
	Code string // "refused" (a cap, a bad spec, busy), "failed" (the transfer failed), "bad" (a malformed request)
	Msg  string
}

func (e *RemoteError) Error() string { return e.Code + ": " + e.Msg }

// Client is an authenticated control connection to an agent. Its methods may
// be called from several goroutines; requests run concurrently at the agent.
type Client struct {
	conn net.Conn
	addr string
	name string // the agent's name: its authorized key's name, or the PSK's

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan *message
	err     error         // why the connection ended
	done    chan struct{} // closed when the reader ends
}

// Timing of a client's connection.
const (
	// handshakeTimeout bounds the authentication exchange at both ends.
	handshakeTimeout = 10 * time.Second
	// pingInterval is how often an idle client tells the agent it is
	// still there (the agent closes connections idle for idleTimeout).
	pingInterval = time.Minute
)

// Dial opens a control connection to the agent at addr ("host:port"; the
// port defaults to DefaultPort) and authenticates both ends with creds. An
// agent that refuses creds, or fails to prove it holds the key (or the
// Ed25519 identity this side accepts), gives an error wrapping
// ErrUnauthorized.
func Dial(ctx context.Context, addr string, creds *Credentials) (*Client, error) {
	if creds == nil {
		return nil, errors.New("agent.Dial: no credentials")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, fmt.Sprint(DefaultPort))
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	deadline := time.Now().Add(handshakeTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	raw.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	fb := &firstBytes{Conn: raw}
	conn := tls.Client(fb, clientTLS())
	name, err := clientAuthenticate(conn, fb, creds)
	stop()
	if err != nil {
		raw.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	raw.SetDeadline(time.Time{})
	c := &Client{conn: conn, addr: addr, name: name, pending: map[uint64]chan *message{}, done: make(chan struct{})}
	go c.read()
	go c.keepalive()
	return c, nil
}

// clientAuthenticate runs the TLS handshake and the cclab handshake bound
// to it. An agent of control protocol v1 (plain text), which answers the
// TLS ClientHello with a v1 error message, gives an error wrapping
// ErrVersion and ErrUnauthorized (a campaign does not retry it). An agent
// over its -max-conns or -max-handshakes says so in a plain-text frame
// before TLS (refuseBusy).
func clientAuthenticate(conn *tls.Conn, fb *firstBytes, creds *Credentials) (string, error) {
	cb, plain, err := startTLS(context.Background(), conn, fb)
	switch {
	case plain != nil && plain.V == 1:
		return "", fmt.Errorf("%w: %w: the agent speaks control protocol v1 (no TLS), this side v2: upgrade cclab on the agent's host (the agent said: %q)", ErrUnauthorized, ErrVersion, plain.Error)
	case plain != nil && plain.V == Version && plain.Type == tError:
		// A refusal before TLS: -max-conns or -max-handshakes.
		return "", fmt.Errorf("%w: %w: %q", ErrBusy, errPeerRefused, plain.Error)
	case err != nil:
		return "", fmt.Errorf("TLS handshake: %w", err)
	}
	return clientHandshake(conn, creds, cb)
}

// Addr returns the agent's control address.
func (c *Client) Addr() string { return c.addr }

// Name returns the agent's name: the name of its key in this side's
// authorized-keys file, or the PSK's name.
func (c *Client) Name() string { return c.name }

// Close closes the connection; requests still waiting fail with ErrClosed
// and the agent cancels them.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}

// read delivers the agent's answers to their requests until the connection
// ends.
func (c *Client) read() {
	var err error
	for {
		var b []byte
		if b, err = readFrame(c.conn, MaxReply); err != nil {
			break
		}
		var m *message
		if m, err = decodeMessage(b); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	c.conn.Close()
	c.mu.Lock()
	c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	c.mu.Unlock()
	close(c.done)
}

// keepalive pings the agent every pingInterval until the connection ends.
func (c *Client) keepalive() {
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), pingInterval)
			_, _ = c.call(ctx, &message{Type: tPing})
			cancel()
		}
	}
}

// call sends a request and waits for its answer. A reply of type error, or
// one carrying an Error, gives a *RemoteError along with the message. When
// ctx ends first the agent is told to cancel the request.
func (c *Client) call(ctx context.Context, m *message) (*message, error) {
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	m.ID = id
	if err := c.write(m); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("%w: %v", ErrClosed, err)
	}
	select {
	case r := <-ch:
		if r.Type == tError || r.Error != "" {
			code := r.Code
			if code == "" {
				code = codeFailed
			}
			return r, &RemoteError{Code: code, Msg: r.Error}
		}
		return r, nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.write(&message{Type: tCancel, ID: id})
		return nil, ctx.Err()
	case <-c.done:
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// writeTimeout bounds one message's write (a peer that stops reading).
const writeTimeout = 30 * time.Second

func (c *Client) write(m *message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	return writeFrame(c.conn, m)
}

// ClockOffset measures this agent's clock minus the caller's (NTP-style,
// RFC 5905 §8: four timestamps T1 client send, T2 agent receive, T3 agent
// send, T4 client receive; offset ((T2−T1)+(T3−T4))/2, delay
// (T4−T1)−(T3−T2)) over n exchanges on the control connection and returns
// the sample with the smallest RTT; the true offset lies within rtt/2 of it.
func (c *Client) ClockOffset(ctx context.Context, n int) (offset, rtt time.Duration, err error) {
	if n < 1 || n > maxOffsetSamples {
		return 0, 0, fmt.Errorf("clock offset: %d samples, want 1..%d", n, maxOffsetSamples)
	}
	best := time.Duration(-1)
	for range n {
		t1 := time.Now()
		r, err := c.call(ctx, &message{Type: tTime, T1: t1.UnixNano()})
		if err != nil {
			return 0, 0, fmt.Errorf("clock offset: %w", err)
		}
		// T4 = T1 + the monotonic round trip (a wall-clock step during the
		// exchange does not enter the sample).
		rt := time.Since(t1)
		off, d := ntpSample(t1.UnixNano(), r.T2, r.T3, t1.UnixNano()+int64(rt), rt)
		if best < 0 || d < best {
			best, offset = d, off
		}
	}
	return offset, best, nil
}

// maxOffsetSamples bounds ClockOffset's n.
const maxOffsetSamples = 1000

// ntpSample is one exchange's offset and delay (RFC 5905 §8) from the wall
// timestamps t1..t4 (Unix ns) and the client's monotonic round trip; the
// delay is never negative (the agent's T3−T2 can exceed a short round trip
// only by clock noise).
func ntpSample(t1, t2, t3, t4 int64, roundTrip time.Duration) (offset, delay time.Duration) {
	offset = time.Duration(((t2 - t1) + (t3 - t4)) / 2)
	delay = roundTrip - time.Duration(t3-t2)
	return offset, max(delay, 0)
}

// Stats returns the agent's counters.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	r, err := c.call(ctx, &message{Type: tStats})
	if err != nil {
		return Stats{}, err
	}
	if r.Stats == nil {
		return Stats{}, errors.New("agent sent no stats")
	}
	return *r.Stats, nil
}
