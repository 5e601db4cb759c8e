package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"cclab/ccalgo"
	"cclab/internal/qlog"
	"cclab/perf"
)

// DefaultPort is the agent's default control port (TCP).
const DefaultPort = 5310

// Defaults and bounds of Config (the cclab agent flags of the same names).
const (
	DefaultMaxBytes      = 1 << 30           // -max-bytes: largest transfer, bytes
	DefaultMaxDuration   = 120 * time.Second // -max-seconds: longest transfer (a bytes transfer too)
	DefaultMaxTransfers  = 4                 // -max-transfers: transfers at once (sending and receiving)
	DefaultQlogMax       = 8 << 20           // -qlog-max: largest qlog returned, bytes
	MaxQlog              = 64 << 20          // -qlog-max's upper bound, bytes
	DefaultMaxConns      = 64                // -max-conns: control connections at once
	DefaultMaxHandshakes = 16                // -max-handshakes: control connections not yet authenticated
	DefaultMaxRate       = 100e6             // -max-rate: fastest path probe (cc probe), bits/s
	// DefaultMaxHandshakesPerSource is -max-handshakes-per-source: control
	// connections of one source address not yet authenticated (as many
	// more may wait for a slot).
	DefaultMaxHandshakesPerSource = 4
	maxTransfersBound             = 1024
	maxConnsBound                 = 4096
)

// Config configures an agent.
type Config struct {
	Listen   string       // control address (TCP), default ":5310"
	DataPort int          // UDP port of the transfer receiver this agent runs, on Listen's host (0 = ephemeral)
	Creds    *Credentials // required

	MaxBytes      int64         // largest transfer, bytes (0: DefaultMaxBytes)
	MaxDuration   time.Duration // longest transfer, sent or received, by request and by the clock (0: DefaultMaxDuration; at most MaxSpecSeconds)
	MaxTransfers  int           // transfers at once, sending and receiving (0: DefaultMaxTransfers)
	MaxRate       float64       // fastest path probe (cc probe: its rate parameter), bits/s (0: DefaultMaxRate)
	QlogMax       int64         // largest qlog returned, bytes; longer ones are cut at a record boundary (0: DefaultQlogMax; negative: no qlogs)
	MaxConns      int           // control connections at once (0: DefaultMaxConns)
	MaxHandshakes int           // control connections not yet authenticated (0: DefaultMaxHandshakes)
	// MaxHandshakesPerSource bounds those of one source address (0:
	// DefaultMaxHandshakesPerSource; at most MaxHandshakes).
	MaxHandshakesPerSource int

	// Logf receives log lines (may be nil). It is called from the control
	// connections' and the data flows' goroutines, concurrently.
	Logf func(format string, args ...any)
}

// withDefaults fills the zero values and checks the ranges; errors name the
// cclab agent flag.
func (c *Config) withDefaults() error {
	if c.Listen == "" {
		c.Listen = ":" + strconv.Itoa(DefaultPort)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = DefaultMaxDuration
	}
	if c.QlogMax == 0 {
		c.QlogMax = DefaultQlogMax
	}
	if c.MaxRate == 0 {
		c.MaxRate = DefaultMaxRate
	}
	def(&c.MaxTransfers, DefaultMaxTransfers)
	def(&c.MaxConns, DefaultMaxConns)
	def(&c.MaxHandshakes, DefaultMaxHandshakes)
	def(&c.MaxHandshakesPerSource, min(DefaultMaxHandshakesPerSource, c.MaxHandshakes))
	switch {
	case c.Creds == nil:
		return errors.New("no credentials: give -psk-file, or -identity with -authorized-keys")
	case c.DataPort < 0 || c.DataPort > 65535:
		return fmt.Errorf("-data-port %d: must be between 0 and 65535", c.DataPort)
	case c.MaxBytes < 0:
		return fmt.Errorf("-max-bytes %d: must be positive", c.MaxBytes)
	case !(c.MaxRate > 0 && c.MaxRate <= ccalgo.MaxProbeRate):
		return fmt.Errorf("-max-rate %g: must be above 0 and at most %g bits/s", c.MaxRate, float64(ccalgo.MaxProbeRate))
	case c.MaxDuration < 0 || c.MaxDuration > MaxSpecSeconds*time.Second:
		return fmt.Errorf("-max-seconds %v: must be between 0 and %ds", c.MaxDuration.Seconds(), MaxSpecSeconds)
	case c.MaxTransfers < 1 || c.MaxTransfers > maxTransfersBound:
		return fmt.Errorf("-max-transfers %d: must be between 1 and %d", c.MaxTransfers, maxTransfersBound)
	case c.QlogMax > MaxQlog:
		return fmt.Errorf("-qlog-max %d: must be at most %d bytes (0: no qlogs)", c.QlogMax, MaxQlog)
	case c.MaxConns < 1 || c.MaxConns > maxConnsBound:
		return fmt.Errorf("-max-conns %d: must be between 1 and %d", c.MaxConns, maxConnsBound)
	case c.MaxHandshakes < 1 || c.MaxHandshakes > c.MaxConns:
		return fmt.Errorf("-max-handshakes %d: must be between 1 and -max-conns (%d)", c.MaxHandshakes, c.MaxConns)
	case c.MaxHandshakesPerSource < 1 || c.MaxHandshakesPerSource > c.MaxHandshakes:
		return fmt.Errorf("-max-handshakes-per-source %d: must be between 1 and -max-handshakes (%d)", c.MaxHandshakesPerSource, c.MaxHandshakes)
	}
	return nil
}

// Stats counts what an agent did.
type Stats struct {
	Accepted        uint64 `json:"accepted"`         // control connections accepted
	Busy            uint64 `json:"busy"`             // closed at once: -max-conns or -max-handshakes(-per-source) reached, or no handshake slot before the deadline
	Authenticated   uint64 `json:"authenticated"`    // handshakes that succeeded
	Unauthorized    uint64 `json:"unauthorized"`     // peers refused: unknown or wrong key, bad proof, replayed handshake
	HandshakeFailed uint64 `json:"handshake_failed"` // handshakes that failed otherwise (timeout, malformed, closed, TLS)
	OldProtocol     uint64 `json:"old_protocol"`     // clients refused for speaking control protocol v1 (no TLS)
	BadMessages     uint64 `json:"bad_messages"`     // malformed or unexpected control messages (the connection is closed)
	Refused         uint64 `json:"refused"`          // requests refused: a bad spec, a cap, busy
	Sent            uint64 `json:"sent"`             // transfers sent that succeeded
	Received        uint64 `json:"received"`         // transfers received that succeeded
	Failed          uint64 `json:"failed"`           // transfers (either role) that failed
	NotAdmitted     uint64 `json:"not_admitted"`     // data flows refused: no such announced transfer, or already claimed
	Running         int    `json:"running"`          // transfers running now (announced incoming ones included)
	Handshaking     int    `json:"handshaking"`      // control connections in their handshake now
	Conns           int    `json:"conns"`            // control connections open now
}

// Server is a running agent: a control listener (TCP) and a transfer
// receiver (perf, UDP on DataPort).
type Server struct {
	cfg     Config
	ln      net.Listener
	tls     *tls.Config // the control connections' TLS (tls.go)
	data    *perf.Server
	qlogDir string // private directory of the qlogs in flight ("": none)

	slots      chan struct{} // one token per running transfer
	conns      chan struct{} // one token per control connection
	handshakes *hsGate       // unauthenticated connections (hsgate.go)

	mu     sync.Mutex
	stats  Stats
	expect map[string]*expected // announced incoming transfers by token
	open   map[net.Conn]struct{}
	wg     sync.WaitGroup

	skew time.Duration // added to the clock time requests read (tests: a host whose clock is off)
	// claimWait, grace and idle are claimTimeout, transferGrace and
	// idleTimeout (tests shorten them).
	claimWait, grace, idle time.Duration
}

// wallNow is the wall clock as time requests report it, Unix ns.
func (s *Server) wallNow() int64 { return time.Now().Add(s.skew).UnixNano() }

// expected is an incoming transfer announced by a receive request.
type expected struct {
	spec    TransferSpec
	key     []byte // admission key (tokenBytes)
	claimed bool   // a data flow with the key's MAC was admitted
	connID  uint64 // its connection ID
	sum     perf.FlowSummary
	done    chan struct{} // closed when sum is final
	ended   bool
	aborted bool // its flow was aborted for outliving its limit
	timer   *time.Timer
}

// ErrConfig is wrapped by NewServer's errors about its configuration (each
// names the cclab agent flag and its allowed values).
var ErrConfig = errors.New("bad configuration")

// NewServer checks the configuration and opens the control listener and the
// data port.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("%w: -listen %q: want host:port or :port (%v)", ErrConfig, cfg.Listen, err)
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxTransfers), conns: make(chan struct{}, cfg.MaxConns),
		handshakes: newHSGate(cfg.MaxHandshakes, cfg.MaxHandshakesPerSource), expect: map[string]*expected{}, open: map[net.Conn]struct{}{},
		claimWait: claimTimeout, grace: transferGrace, idle: idleTimeout}
	if s.tls, err = serverTLS(); err != nil {
		return nil, fmt.Errorf("TLS certificate: %v", err)
	}
	if cfg.QlogMax > 0 {
		if s.qlogDir, err = os.MkdirTemp("", "cclab-agent-qlog-"); err != nil {
			return nil, fmt.Errorf("qlog directory: %v", err)
		}
	}
	s.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.removeQlogDir()
		return nil, fmt.Errorf("-listen %s: %v", cfg.Listen, err)
	}
	s.data, err = perf.NewServer(perf.ServerConfig{
		Listen:  net.JoinHostPort(host, strconv.Itoa(cfg.DataPort)),
		QlogDir: s.qlogDir,
		Admit:   s.admit,
		FlowKey: s.flowKey,
		OnFlow:  s.onFlow,
		Logf:    s.cfg.Logf,
	})
	if err != nil {
		s.ln.Close()
		s.removeQlogDir()
		return nil, fmt.Errorf("-data-port %d: %v", cfg.DataPort, err)
	}
	return s, nil
}

func (s *Server) removeQlogDir() {
	if s.qlogDir != "" {
		os.RemoveAll(s.qlogDir)
	}
}

// Addr returns the control listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// DataAddr returns the transfer receiver's UDP address.
func (s *Server) DataAddr() netip.AddrPort { return s.data.Addr() }

// Stats returns the agent's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Running, st.Handshaking, st.Conns = len(s.slots), s.handshakes.inProgress(), len(s.conns)
	return st
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// Serve accepts control connections until ctx is done, then closes them,
// aborts the transfers still running and returns nil.
func (s *Server) Serve(ctx context.Context) error {
	dctx, dcancel := context.WithCancel(ctx)
	dataDone := make(chan error, 1)
	go func() { dataDone <- s.data.Serve(dctx) }()
	stop := context.AfterFunc(ctx, func() {
		s.ln.Close()
		s.mu.Lock()
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
	})
	defer stop()
	var err error
	for {
		var c net.Conn
		c, err = s.ln.Accept()
		if err != nil {
			break
		}
		s.count(func(st *Stats) { st.Accepted++ })
		select {
		case s.conns <- struct{}{}:
		default:
			s.count(func(st *Stats) { st.Busy++ })
			s.refuseBusy(c, fmt.Sprintf("%d control connections already open (-max-conns)", s.cfg.MaxConns))
			continue
		}
		s.mu.Lock()
		s.open[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.conns }()
			s.handle(ctx, c)
			s.mu.Lock()
			delete(s.open, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
	s.ln.Close()
	s.wg.Wait()
	dcancel()
	derr := <-dataDone
	s.endExpected("the agent stopped")
	s.removeQlogDir()
	if ctx.Err() != nil {
		return derr
	}
	return errors.Join(err, derr)
}

// authenticate runs the TLS handshake and the cclab handshake bound to it.
// A client of control protocol v1 (plain text) is answered in its own
// format and refused (Stats.OldProtocol).
func (s *Server) authenticate(ctx context.Context, c *tls.Conn, fb *firstBytes) (string, error) {
	cb, plain, err := startTLS(ctx, c, fb)
	switch {
	case plain != nil && plain.V == 1:
		s.count(func(st *Stats) { st.OldProtocol++ })
		s.logf("refused %v: it speaks control protocol v1 (no TLS); this agent speaks v%d", c.RemoteAddr(), Version)
		refuseV1(fb.Conn)
		return "", errOldProtocol
	case err != nil:
		return "", fmt.Errorf("%w: %w", errTLS, err)
	}
	return serverHandshake(c, s.cfg.Creds, cb)
}

// errOldProtocol is authenticate's error for a v1 client, already answered.
var errOldProtocol = errors.New("control protocol v1")

// Idle and message timeouts of an authenticated connection.
const (
	// idleTimeout closes a connection with no message and no request in
	// flight for this long (clients ping every pingInterval).
	idleTimeout = 5 * pingInterval
	// messageTimeout bounds the arrival of a message's rest once its first
	// byte came.
	messageTimeout = 30 * time.Second
	// maxInFlight bounds the requests running at once on one connection.
	maxInFlight = 2*maxTransfersBound + 16
)

// session is one authenticated control connection.
type session struct {
	s    *Server
	conn net.Conn
	peer string // the client's name

	wmu sync.Mutex
	mu  sync.Mutex
	// reqs cancels the requests in flight by ID.
	reqs map[uint64]context.CancelFunc
	wg   sync.WaitGroup
}

// serve reads requests until the connection ends, then cancels the ones in
// flight and waits for them.
func (se *session) serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		se.wg.Wait()
	}()
	for {
		b, err := se.readFrame()
		if err != nil {
			if errors.Is(err, errBadMessage) {
				se.s.count(func(st *Stats) { st.BadMessages++ })
				se.reply(&message{Type: tError, Code: codeBad, Error: err.Error()})
			}
			return
		}
		t2 := se.s.wallNow()
		m, err := decodeMessage(b)
		if err != nil {
			se.s.count(func(st *Stats) { st.BadMessages++ })
			se.reply(&message{Type: tError, Code: codeBad, Error: err.Error()})
			return
		}
		switch m.Type {
		case tPing:
			se.reply(&message{Type: tPong, ID: m.ID})
		case tTime:
			se.reply(&message{Type: tTime, ID: m.ID, T1: m.T1, T2: t2, T3: se.s.wallNow()})
		case tStats:
			st := se.s.Stats()
			se.reply(&message{Type: tStatsRep, ID: m.ID, Stats: &st})
		case tCancel:
			se.mu.Lock()
			if c := se.reqs[m.ID]; c != nil {
				c()
			}
			se.mu.Unlock()
		case tReceive:
			se.reply(se.s.receive(m, se.peer))
		case tCollect, tSend:
			se.start(ctx, m)
		default:
			se.s.count(func(st *Stats) { st.BadMessages++ })
			se.reply(&message{Type: tError, ID: m.ID, Code: codeBad, Error: fmt.Sprintf("unexpected message %q", m.Type)})
			return
		}
	}
}

// start runs a long request in its own goroutine, cancelled by a cancel
// message or the end of the connection.
func (se *session) start(ctx context.Context, m *message) {
	se.mu.Lock()
	if len(se.reqs) >= maxInFlight {
		se.mu.Unlock()
		se.s.count(func(st *Stats) { st.Refused++ })
		se.reply(&message{Type: tError, ID: m.ID, Code: codeRefused, Error: fmt.Sprintf("%d requests in flight on this connection", maxInFlight)})
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	se.reqs[m.ID] = cancel
	se.mu.Unlock()
	se.wg.Add(1)
	go func() {
		defer se.wg.Done()
		var r *message
		if m.Type == tSend {
			r = se.s.send(rctx, m, se.peer)
		} else {
			r = se.s.collect(rctx, m)
		}
		se.mu.Lock()
		delete(se.reqs, m.ID)
		se.mu.Unlock()
		cancel()
		se.reply(r)
	}()
}

// inFlight reports whether requests are running.
func (se *session) inFlight() bool {
	se.mu.Lock()
	defer se.mu.Unlock()
	return len(se.reqs) > 0
}

// readFrame reads the next request: the connection may stay silent while
// requests run, or for idleTimeout otherwise; a message, once begun, must
// arrive within messageTimeout.
func (se *session) readFrame() ([]byte, error) {
	var hdr [4]byte
	got := 0
	for got < len(hdr) {
		d := se.s.idle
		if got > 0 {
			d = messageTimeout
		}
		se.conn.SetReadDeadline(time.Now().Add(d))
		n, err := se.conn.Read(hdr[got:])
		got += n
		if err != nil {
			var ne net.Error
			if got == 0 && errors.As(err, &ne) && ne.Timeout() && se.inFlight() {
				continue
			}
			return nil, err
		}
	}
	se.conn.SetReadDeadline(time.Now().Add(messageTimeout))
	return readBody(se.conn, hdr, MaxRequest)
}

// reply writes an answer (errors end the connection at the next read).
func (se *session) reply(m *message) {
	se.wmu.Lock()
	defer se.wmu.Unlock()
	se.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := writeFrame(se.conn, m); err != nil {
		se.conn.Close()
	}
}

// refuse answers a request with a refusal and counts it.
func (s *Server) refuse(id uint64, format string, args ...any) *message {
	s.count(func(st *Stats) { st.Refused++ })
	msg := fmt.Sprintf(format, args...)
	s.logf("refused request: %s", msg)
	return &message{Type: tError, ID: id, Code: codeRefused, Error: msg}
}

// checkSpec checks a request's spec against the parsers and this agent's
// caps; it returns the refusal message or "".
func (s *Server) checkSpec(sp *TransferSpec) string {
	if sp == nil {
		return "no transfer spec"
	}
	if err := sp.Validate(); err != nil {
		return err.Error()
	}
	switch {
	case sp.Bytes > s.cfg.MaxBytes:
		return fmt.Sprintf("transfer %q: %d bytes, this agent moves at most %d (-max-bytes)", sp.ID, sp.Bytes, s.cfg.MaxBytes)
	case sp.duration() > s.cfg.MaxDuration:
		return fmt.Sprintf("transfer %q: %gs, this agent runs transfers of at most %gs (-max-seconds)", sp.ID, sp.Seconds, s.cfg.MaxDuration.Seconds())
	}
	if rate := sp.probeRate(); rate > s.cfg.MaxRate {
		return fmt.Sprintf("transfer %q: a probe at %g bits/s, this agent probes at most at %g (-max-rate)", sp.ID, rate, s.cfg.MaxRate)
	} else if rate > 0 && sp.Seconds*rate/8 > float64(s.cfg.MaxBytes) {
		return fmt.Sprintf("transfer %q: a probe of %gs at %g bits/s sends more than %d bytes (-max-bytes)", sp.ID, sp.Seconds, rate, s.cfg.MaxBytes)
	}
	return ""
}

// takeSlot reserves a transfer slot; it returns "" or the refusal.
func (s *Server) takeSlot() string {
	select {
	case s.slots <- struct{}{}:
		return ""
	default:
		return fmt.Sprintf("%d transfers already running (-max-transfers)", s.cfg.MaxTransfers)
	}
}

// Transfer time bounds.
const (
	// claimTimeout is how long an announced transfer waits for its data
	// flow to arrive.
	claimTimeout = 60 * time.Second
	// transferGrace is how long past its requested or capped length a
	// transfer may take (handshake, last bytes, closing) before it is
	// aborted.
	transferGrace = 30 * time.Second
)

// limit is how long a transfer of spec may run at this agent.
func (s *Server) limit(sp *TransferSpec) time.Duration {
	if sp.Bytes > 0 {
		return s.cfg.MaxDuration + s.grace
	}
	return sp.duration() + s.grace
}

// receive announces an incoming transfer: it reserves a slot and an
// admission key (admission.go) whose MAC the sender's data flow must carry
// to be admitted; the key goes back on this (encrypted) connection only.
func (s *Server) receive(m *message, peer string) *message {
	if msg := s.checkSpec(m.Spec); msg != "" {
		return s.refuse(m.ID, "%s", msg)
	}
	if msg := s.takeSlot(); msg != "" {
		return s.refuse(m.ID, "%s", msg)
	}
	key := make([]byte, tokenBytes)
	_, _ = rand.Read(key)
	id := flowID(key)
	e := &expected{spec: *m.Spec, key: key, done: make(chan struct{})}
	s.mu.Lock()
	s.expect[id] = e
	// The announcement lapses if no flow claims it in time, and a claimed
	// flow is aborted when it outlives its limit.
	e.timer = time.AfterFunc(s.claimWait+s.limit(m.Spec), func() { s.expire(id) })
	s.mu.Unlock()
	s.logf("transfer %q from %q: expecting its flow %s on %v", m.Spec.ID, peer, id, s.data.Addr())
	return &message{Type: tReady, ID: m.ID, Token: hex.EncodeToString(key), DataPort: int(s.data.Addr().Port())}
}

// admit is the data receiver's Admit: only a flow naming an announced
// transfer (its flow ID) with the admission MAC of its own handshake under
// that transfer's key, and only the first. A flow with a wrong MAC claims
// nothing.
func (s *Server) admit(a perf.Admission) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.expect[a.Test]
	switch {
	case e == nil:
		s.stats.NotAdmitted++
		return false, errors.New("no such transfer announced to this agent")
	case !a.Verify(e.key):
		s.stats.NotAdmitted++
		s.logf("transfer %q: flow %016x from %v refused: wrong admission MAC", e.spec.ID, a.ConnID, a.Peer)
		return false, errors.New("wrong admission MAC for this flow (the MAC covers its connection IDs)")
	case e.claimed || e.ended:
		s.stats.NotAdmitted++
		return false, errors.New("this transfer's flow has already arrived")
	}
	e.claimed, e.connID = true, a.ConnID
	s.logf("transfer %q: flow %016x from %v admitted", e.spec.ID, a.ConnID, a.Peer)
	return e.spec.Qlog && s.qlogDir != "", nil
}

// flowKey is the data receiver's FlowKey: the admission key of the
// announced transfer whose flow ID test is (its data path is authenticated
// with it), or nil.
func (s *Server) flowKey(test string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.expect[test]; e != nil {
		return e.key
	}
	return nil
}

// onFlow is the data receiver's OnFlow: the admitted flow's summary ends
// its transfer.
func (s *Server) onFlow(sum perf.FlowSummary) {
	s.mu.Lock()
	e := s.expect[sum.Test]
	if e == nil || !e.claimed || sum.ConnID != fmt.Sprintf("%016x", e.connID) {
		s.mu.Unlock()
		return
	}
	e.sum = sum
	s.endLocked(e, "")
	s.mu.Unlock()
}

// endLocked ends a transfer (once): with a failure message when its flow
// never reported. s.mu is held.
func (s *Server) endLocked(e *expected, fail string) {
	if e.ended {
		return
	}
	e.ended = true
	e.timer.Reset(s.claimWait) // the result waits this long to be collected

	if fail != "" {
		e.sum.Error = fail
		e.sum.Test = ""
	}
	if e.sum.Error != "" {
		s.stats.Failed++
	} else {
		s.stats.Received++
	}
	close(e.done)
	<-s.slots
}

// expire ends an announced transfer that outlived its limit: a claimed flow
// is aborted (it then reports, failed), an unclaimed one lapses.
func (s *Server) expire(id string) {
	s.mu.Lock()
	e := s.expect[id]
	if e == nil || e.ended {
		if e != nil {
			delete(s.expect, id) // ended and never collected
			s.removeQlog(e)
		}
		s.mu.Unlock()
		return
	}
	claimed, connID := e.claimed && !e.aborted, e.connID
	switch {
	case !e.claimed:
		s.endLocked(e, fmt.Sprintf("no data flow arrived within %v", s.claimWait))
	case e.aborted:
		// The aborted flow never reported: end the transfer regardless.
		s.endLocked(e, "aborted after its time limit (-max-seconds)")
	default:
		// The aborted flow reports (failed) and ends the transfer; if it
		// does not within claimWait, the next expiry ends it.
		e.aborted = true
		e.timer.Reset(s.claimWait)
	}
	s.mu.Unlock()
	if claimed {
		s.logf("transfer %q: aborting flow %016x after its limit", e.spec.ID, connID)
		s.data.Abort(connID)
	}
}

// endExpected ends every transfer still expected (the agent stops).
func (s *Server) endExpected(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.expect {
		s.endLocked(e, why)
		delete(s.expect, id)
	}
}

// collect waits for an announced transfer's flow to end and returns the
// receiver's summary (and qlog). Cancelled before a flow arrived, the
// announcement is withdrawn.
func (s *Server) collect(ctx context.Context, m *message) *message {
	key, _ := hex.DecodeString(m.Token)
	id := flowID(key)
	s.mu.Lock()
	e := s.expect[id]
	s.mu.Unlock()
	if e == nil {
		return s.refuse(m.ID, "no transfer with this token (expired or collected)")
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		s.mu.Lock()
		if !e.claimed {
			s.endLocked(e, "withdrawn: the scheduler cancelled the transfer before its flow arrived")
		}
		s.mu.Unlock()
		return &message{Type: tError, ID: m.ID, Code: codeFailed, Error: "cancelled"}
	}
	s.mu.Lock()
	delete(s.expect, id)
	s.mu.Unlock()
	r := &message{Type: tResult, ID: m.ID}
	r.Receiver, _ = json.Marshal(e.sum)
	if e.spec.Qlog && e.claimed {
		r.Qlog = s.readQlog(s.serverQlog(e.connID))
	}
	s.removeQlog(e)
	if e.sum.Error != "" {
		r.Error, r.Code = "receiver: "+e.sum.Error, codeFailed
	}
	return r
}

func (s *Server) serverQlog(connID uint64) string {
	return filepath.Join(s.qlogDir, fmt.Sprintf("%016x-server.sqlog", connID))
}

func (s *Server) removeQlog(e *expected) {
	if s.qlogDir != "" && e.claimed {
		os.Remove(s.serverQlog(e.connID))
	}
}

// readQlog reads a qlog file of at most -qlog-max bytes; a longer one is
// cut at its last record boundary within the bound (RFC 7464: a record
// begins with 0x1E), so what is returned is a valid prefix of the trace.
func (s *Server) readQlog(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, s.cfg.QlogMax+1)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	if int64(n) <= s.cfg.QlogMax {
		return b
	}
	if i := bytes.LastIndexByte(b[:s.cfg.QlogMax], qlog.RecordSeparator); i > 0 {
		return b[:i]
	}
	return nil
}

// send runs a transfer as its sender (perf.Run) to the receiving agent's
// data address, its flow admitted by the MAC under the key that agent
// announced (the key itself is not sent).
func (s *Server) send(ctx context.Context, m *message, peer string) *message {
	if msg := s.checkSpec(m.Spec); msg != "" {
		return s.refuse(m.ID, "%s", msg)
	}
	if m.Token == "" || m.Addr == "" {
		return s.refuse(m.ID, "send: no token or receiver address")
	}
	if msg := s.takeSlot(); msg != "" {
		return s.refuse(m.ID, "%s", msg)
	}
	defer func() { <-s.slots }()
	sp := m.Spec
	cc, rec := sp.ccRecovery()
	cfg := perf.ClientConfig{Addr: m.Addr, Bytes: sp.Bytes, Duration: sp.duration(), CC: cc, Recovery: rec,
		Size: sp.MaxDatagram, Logf: s.cfg.Logf,
		Verify: perf.VerifySHA256} // crossCheck compares the receiving agent's digest with the sender's
	key, _ := hex.DecodeString(m.Token)
	cfg.Test, cfg.AdmitKey = flowID(key), key
	if sp.Qlog && s.qlogDir != "" {
		dir, err := os.MkdirTemp(s.qlogDir, "send-")
		if err == nil {
			cfg.QlogDir = dir
			defer os.RemoveAll(dir)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, s.limit(sp))
	defer cancel()
	s.logf("transfer %q for %q: sending to %s (cc %s, recovery %s)", sp.ID, peer, m.Addr, cc, rec)
	res, err := perf.Run(rctx, cfg)
	r := &message{Type: tResult, ID: m.ID, Sender: res}
	if res != nil && cfg.QlogDir != "" {
		r.Qlog = s.readQlog(filepath.Join(cfg.QlogDir, res.Start.ConnID+"-client.sqlog"))
	}
	if err != nil {
		s.count(func(st *Stats) { st.Failed++ })
		r.Error, r.Code = "sender: "+err.Error(), codeFailed
		s.logf("transfer %q failed: %v", sp.ID, err)
	} else {
		s.count(func(st *Stats) { st.Sent++ })
	}
	return r
}
