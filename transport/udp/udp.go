// Package udp is cclab's live socket driver (docs/architecture.md): it runs a sans-I/O
// transport.Endpoint on a netio.Conn (real UDP with batched I/O and ECN, or
// an in-memory pair in tests) and gives applications blocking calls.
//
// Concurrency model: one Endpoint has one mutex guarding the
// transport.Endpoint and all its Conns, and two goroutines:
//
//   - the reader blocks in netio.Conn.ReadBatch and hands each datagram of a
//     batch to transport.Endpoint.Receive under the mutex, calling Transmit
//     after each one (the transport's driver rule: ACKs every second
//     segment, data released by each ACK), and sends what that produced;
//   - the writer owns the endpoint's one real timer: woken by the reader, by
//     an application call or by the timer, it runs OnDeadline when the
//     transport's Deadline has passed, drains Transmit into a batch under the
//     mutex, sends it outside the mutex, and re-arms the timer from
//     Deadline().
//
// Batches reach the socket in the order they were produced.
//
// Waits shorter than 2 ms (pacing) sleep the writer's thread with nanosleep
// in short slices instead of a Go timer, which wakes up to ~1 ms late on an
// idle Linux process. On Linux UDP sockets the writer sends runs of
// equal-sized datagrams with UDP GSO (netio.GSOWriter; Config.NoGSO or
// CCLAB_NO_GSO=1 turn it off).
//
// Application calls (Conn.Read, Conn.Write, ...) take the mutex, call the
// non-blocking transport method and wake the writer. A call that must block
// registers the condition it waits for; the driver evaluates it after every
// input batch, timer run or batch sent and wakes only the calls whose
// condition holds (waiters.go). Conn.Write waits on a condition variable
// broadcast at the same points.
//
// With Config.OneGoroutine (Linux) the reader and the writer are one
// goroutine blocked in one system call on the socket and the next deadline
// (one.go).
//
// Time is the monotonic clock since the Endpoint was created, offset by
// clock.Start so that it is never clock.Never.
//
// Steady-state data transfer allocates nothing per datagram in this package:
// receive and transmit buffers are allocated once per Endpoint.
package udp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/netip"
	"time"

	"cclab/clock"
	"cclab/netio"
	"cclab/transport"
)

// Config configures an Endpoint.
type Config struct {
	// Endpoint is passed to transport.NewEndpoint. If Endpoint.Rand is nil it
	// is seeded from crypto/rand; if Endpoint.Entropy is nil it is
	// crypto/rand.Reader.
	Endpoint transport.EndpointConfig
	// Batch is the number of datagrams per ReadBatch/WriteBatch (at most
	// DefaultBatch); 0: DefaultBatch.
	Batch int
	// SendBuf is the transmit buffer per datagram, bytes; it must be at
	// least the largest Config.MaxDatagram used; 0: DefaultSendBuf.
	SendBuf int
	// RecvBuffer is the socket receive buffer to ask for, bytes; 0:
	// DefaultRecvBuffer. It should hold more than the receive windows of
	// the endpoint's connections, counting the kernel's per-datagram
	// overhead, or a receiving application that falls behind loses
	// datagrams in the kernel although flow control allowed them.
	RecvBuffer int
	// TransmitPerBatch makes the reader call Transmit once per received
	// batch (up to Batch datagrams) instead of after every datagram. The
	// transport then ACKs once per batch (stretch ACKs, as Linux TCP does
	// behind GRO) and ACKs release data in bursts: fewer datagrams and more
	// throughput on fast paths such as loopback, but ACK clocking no longer
	// matches the transport's rule (and the simulator) when datagrams
	// arrive in bursts. Off by default.
	TransmitPerBatch bool
	// NoGSO disables the UDP GSO write path (Linux); the environment
	// variable CCLAB_NO_GSO=1 does the same for every Endpoint.
	NoGSO bool
	// NoGRO leaves UDP receive offload off (Linux): each read returns one
	// datagram. With GRO on (the default) the kernel may coalesce a burst of
	// one sender's datagrams into one read; the driver splits it and feeds
	// the datagrams to the transport one by one, so the transport's ACK
	// rule is unchanged. The environment variable CCLAB_NO_GRO=1 does the
	// same for every Endpoint (netio.EnableGRO).
	NoGRO bool
	// TimerSlack is how late the connections tolerate a timed wake-up of
	// the writer. Below goTimerSlack (the default 0 included) the writer
	// sleeps waits under 2 ms precisely (netio.Sleep, in 200 µs slices),
	// waking within tens of microseconds: pacing one datagram at a time needs
	// that. At goTimerSlack or more it always waits on Go's timer (about
	// 0.1-1 ms late here) and no thread blocks in a sleep: a sender whose
	// connections release a pacing quantum at a time
	// (transport.DgramConfig.PacingQuantum) sets it to the quantum.
	TimerSlack time.Duration
	// OneGoroutine runs the driver in one goroutine that reads, runs the
	// timers and writes, blocked in one system call on the socket and the
	// next deadline (one.go), instead of a reader and a writer goroutine:
	// far fewer goroutine hand-offs and context switches per datagram
	// batch, at the cost of the two goroutines' parallelism on a fast path.
	// Linux UDP sockets only (elsewhere, and on a MemConn, the driver keeps
	// two goroutines; LoopStats.OneGoroutine says which ran).
	OneGoroutine bool
	// InjectTimerLate is added to the measured lateness of every timed
	// wake-up of the driver's writer (LoopStats.TimerLate): it makes the
	// loop look starved of CPU, for tests of the host-limited check
	// (package hostlimit). 0 in real use.
	InjectTimerLate time.Duration
	// pauseRead, if set, runs before the driver processes each read
	// batch: tests stall the reader with it (loop.pauseRead).
	pauseRead func()
}

// Endpoint is a transport.Endpoint running on a socket.
type Endpoint struct {
	l       *loop
	ep      *transport.Endpoint
	pathMax int // DialSocket: the route's largest UDP payload, bytes (0: unknown)
}

// PathMaxPayload returns the largest UDP payload the route of a socket
// opened by DialSocket carries (its MTU less the IP and UDP headers), the
// limit for datagram size discovery (transport.Config.PLPMTUMax), bytes;
// 0 if unknown (a listening socket, or not Linux).
func (e *Endpoint) PathMaxPayload() int { return e.pathMax }

// DefaultRecvBuffer is the socket receive buffer an Endpoint asks for,
// bytes: with the kernel's overhead of about one extra 1 KiB per 1200-byte
// datagram it holds more than transport.DefaultRecvWindow (8 MiB) of
// payload. Above net.core.rmem_max it needs CAP_NET_ADMIN
// (SO_RCVBUFFORCE); without it the kernel's cap applies.
const DefaultRecvBuffer = 16 << 20

// ErrClosed is returned by blocking calls on a closed Endpoint.
var ErrClosed = errors.New("udp: endpoint closed")

// Listen opens a UDP socket on addr (e.g. ":5201") and runs an Endpoint on it.
func Listen(addr string, cfg Config) (*Endpoint, error) {
	c, err := netio.ListenUDP(addr)
	if err != nil {
		return nil, err
	}
	return New(c, cfg), nil
}

// DialSocket opens a UDP socket connected to remote (so the kernel picks the
// source address and reports ICMP port-unreachable) and runs a client
// Endpoint on it. Use Endpoint.Dial to open connections.
func DialSocket(remote string, cfg Config) (*Endpoint, error) {
	c, err := netio.DialUDP("", remote)
	if err != nil {
		return nil, err
	}
	// The route's largest payload (datagram size discovery's limit): the
	// send buffers must hold it.
	pathMax := netio.PathMaxPayload(c)
	if pathMax > max(cfg.SendBuf, DefaultSendBuf) {
		cfg.SendBuf = pathMax
	}
	e := New(c, cfg)
	e.pathMax = pathMax
	e.l.mu.Lock()
	e.l.onUnreachable = func(now clock.Time) {
		// A connected socket has one peer: every connection ends.
		e.ep.Unreachable(now, netip.AddrPort{}, ErrPeerUnreachable)
		e.l.kick()
	}
	e.l.mu.Unlock()
	return e, nil
}

// New runs an Endpoint on c and takes ownership of c.
func New(c netio.Conn, cfg Config) *Endpoint {
	ec := cfg.Endpoint
	if ec.Entropy == nil {
		ec.Entropy = rand.Reader // Retry-token keys, path challenges
	}
	if ec.Server && ec.ResetKey == nil {
		// Stateless resets (transport reset.go) with a key of this process
		// only: a restarted server needs the same key (from a file) for its
		// old clients' resets to be recognised.
		ec.ResetKey = make([]byte, 32)
		_, _ = rand.Read(ec.ResetKey)
	}
	if ec.Rand == nil {
		var seed [16]byte
		_, _ = rand.Read(seed[:])
		ec.Rand = mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	}
	ep := transport.NewEndpoint(ec)
	e := &Endpoint{ep: ep}
	rb := cfg.RecvBuffer
	if rb <= 0 {
		rb = DefaultRecvBuffer
	}
	got := netio.RaiseReceiveBuffer(c, rb)
	// GRO goes on before the reader starts: a datagram queued before
	// UDP_GRO is set would arrive segmented (harmless, but not coalesced).
	// Every read buffer holds netio.GROBufSize bytes (DefaultRecvBuf).
	gro := !cfg.NoGRO && netio.EnableGRO(c)
	// Kernel receive stamps measure how long datagrams wait in the socket
	// for the driver (LoopStats.ReadLate).
	netio.EnableRxTimestamps(c)
	one := oneGoroutine(cfg.OneGoroutine) && unpoll(c)
	e.l = newLoop(ep, c, cfg.Batch, DefaultRecvBuf, cfg.SendBuf, !cfg.NoGSO)
	e.l.stats.RecvBuffer = got
	e.l.stats.GRO = gro
	e.l.perBatch = cfg.TransmitPerBatch
	e.l.precise = cfg.TimerSlack < goTimerSlack
	e.l.lateHook = cfg.InjectTimerLate
	e.l.pauseRead = cfg.pauseRead
	if one {
		e.l.startOne()
	}
	e.l.run()
	return e
}

// LocalAddr returns the socket's bound address.
func (e *Endpoint) LocalAddr() netip.AddrPort { return e.l.conn.LocalAddr() }

// Now returns the Endpoint's current project time.
func (e *Endpoint) Now() clock.Time { return e.l.now() }

// Close stops the driver and closes the socket. Conns stop making progress;
// blocked calls return ErrClosed.
func (e *Endpoint) Close() error { return e.l.close() }

// Stats returns the transport endpoint's counters.
func (e *Endpoint) Stats() transport.EndpointStats {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	return e.ep.Stats()
}

// LoopStats returns the driver's counters.
func (e *Endpoint) LoopStats() LoopStats {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	st := e.l.stats
	st.Kicks = e.l.kicks.Load()
	st.RecvDrops, _ = netio.ReceiveDrops(e.l.conn)
	return st
}

// Do runs f with the Endpoint's lock held and then wakes the writer: the way
// to make any transport call not wrapped here. f must not block.
func (e *Endpoint) Do(f func(now clock.Time, ep *transport.Endpoint)) {
	e.l.mu.Lock()
	f(e.l.now(), e.ep)
	e.l.mu.Unlock()
	e.l.kick()
}

// ErrPeerUnreachable ends an established connection after
// UnreachableErrors consecutive ICMP port-unreachable reports from the
// peer's host (a connected socket, DialSocket): the receiver has gone.
var ErrPeerUnreachable = errors.New("peer unreachable (ICMP port unreachable, repeatedly): the receiver is no longer listening")

// ErrRefused reports that the peer's host answered with ICMP port
// unreachable: nothing listens on that port.
var ErrRefused = errors.New("connection refused (ICMP port unreachable): no receiver listening at that address")

// Dial opens a connection to peer and blocks until the handshake completes,
// the connection fails (e.g. transport.ErrHandshakeTimeout), or ctx ends.
func (e *Endpoint) Dial(ctx context.Context, peer netip.AddrPort, cfg transport.Config) (*Conn, error) {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	if e.l.shut {
		return nil, ErrClosed
	}
	// Only a port-unreachable report that arrives during this handshake
	// counts (an old one may concern an earlier connection).
	e.l.refused = false
	tc, err := e.ep.Dial(e.l.now(), peer, cfg)
	if err != nil {
		return nil, err
	}
	e.l.kick()
	if err := e.awaitHandshake(ctx, tc.Established, func() bool { return tc.Err() != nil || tc.Done() }); err != nil {
		return nil, fmt.Errorf("dial %v: %w", peer, err)
	}
	if !tc.Established() {
		return nil, dialError(peer, tc.Err())
	}
	return &Conn{e: e, c: tc}, nil
}

// awaitHandshake waits until established() or ended() holds, the peer's
// host reports its port unreachable (ErrRefused), ctx ends, or the Endpoint
// closes. The lock must be held.
func (e *Endpoint) awaitHandshake(ctx context.Context, established, ended func() bool) error {
	refused := false
	err := e.wait(ctx, func() bool {
		if e.l.refused && !established() {
			refused = true
			return true
		}
		return established() || ended()
	})
	if refused {
		return ErrRefused
	}
	return err
}

// dialError explains why a handshake with peer ended without a connection
// (err: the connection's error).
func dialError(peer netip.AddrPort, err error) error {
	switch {
	case errors.Is(err, transport.ErrHandshakeTimeout):
		return fmt.Errorf("dial %v: no answer (is a receiver running there?): %w", peer, err)
	case err != nil:
		return fmt.Errorf("dial %v: %w", peer, err)
	}
	return fmt.Errorf("dial %v: connection closed during handshake", peer)
}

// Accept blocks until a peer opens a connection, ctx ends, or the Endpoint closes.
func (e *Endpoint) Accept(ctx context.Context) (*Conn, error) {
	tc, err := acceptNext(ctx, e, e.ep.Accept)
	if err != nil {
		return nil, err
	}
	return &Conn{e: e, c: tc}, nil
}

// acceptNext blocks until next (called with the lock held) returns a new
// connection, ctx ends, or the Endpoint closes.
func acceptNext[T any](ctx context.Context, e *Endpoint, next func() *T) (*T, error) {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	var tc *T
	err := e.wait(ctx, func() bool {
		tc = next()
		return tc != nil
	})
	return tc, err
}

// Conn is a transport.Conn with blocking calls. All methods are safe for
// concurrent use (they take the Endpoint's lock); one reader and one writer
// goroutine per Conn is the intended use.
type Conn struct {
	e *Endpoint
	c *transport.Conn
}

// ID returns the connection ID (the same value at both ends).
func (c *Conn) ID() uint64 { return c.c.ID() }

// InitialDCID returns the destination connection ID of the client's
// Initial (the same value at both ends).
func (c *Conn) InitialDCID() uint64 { return c.c.InitialDCID() }

// Request returns the application request the client sent in its handshake.
func (c *Conn) Request() []byte {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Request()
}

// Do runs f with the Endpoint's lock held and then wakes the writer. f must
// not block.
func (c *Conn) Do(f func(now clock.Time, tc *transport.Conn)) {
	c.e.l.mu.Lock()
	f(c.e.l.now(), c.c)
	c.e.l.mu.Unlock()
	c.e.l.kick()
}

// Stats returns the connection's statistics.
func (c *Conn) Stats() transport.ConnStats {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Stats()
}

// Read blocks until stream bytes are available and copies them into p. It
// returns io.EOF after the peer's FIN once every byte was read, and the
// connection's error if it failed.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l := c.e.l
	l.mu.Lock()
	n := 0
	eof, cerr := false, error(nil) // read under the lock: the loop goroutines write them
	err := c.e.wait(context.Background(), func() bool {
		n = c.c.Read(p)
		eof, cerr = c.c.EOF(), c.c.Err()
		return n > 0 || eof || cerr != nil
	})
	l.mu.Unlock()
	if n > 0 {
		l.callerFlush() // reading may open the receive window: a window update
		return n, nil
	}
	if err != nil {
		return 0, err
	}
	if eof {
		return 0, io.EOF
	}
	return 0, cerr
}

// Write blocks until all of p is queued in the send buffer (or the
// connection fails) and returns the bytes queued.
func (c *Conn) Write(p []byte) (int, error) {
	l := c.e.l
	l.mu.Lock()
	defer l.mu.Unlock()
	done := 0
	for {
		done += c.c.Write(p[done:])
		if done > 0 {
			l.kick()
		}
		if done == len(p) {
			return done, nil
		}
		if err := c.c.Err(); err != nil {
			return done, err
		}
		if c.c.Done() {
			return done, io.ErrClosedPipe
		}
		if l.shut {
			return done, ErrClosed
		}
		l.cond.Wait()
	}
}

// SetSource makes the connection send length bytes generated by src
// (length < 0: until CloseWrite); see transport.Conn.SetSource.
func (c *Conn) SetSource(src transport.Source, length int64) {
	c.Do(func(clock.Time, *transport.Conn) { c.c.SetSource(src, length) })
}

// CloseWrite closes the sending direction: FIN after all queued data.
func (c *Conn) CloseWrite() {
	c.Do(func(now clock.Time, tc *transport.Conn) { tc.CloseWrite(now) })
}

// Wait blocks until the connection is done (both directions closed and
// acknowledged, or failed) or ctx ends, and returns the connection's error.
func (c *Conn) Wait(ctx context.Context) error {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	if err := c.e.wait(ctx, c.c.Done); err != nil {
		return err
	}
	return c.c.Err()
}

// Err returns why the connection failed, or nil.
func (c *Conn) Err() error {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Err()
}

// Peer returns the peer's address.
func (c *Conn) Peer() netip.AddrPort {
	c.e.l.mu.Lock()
	defer c.e.l.mu.Unlock()
	return c.c.Peer()
}
