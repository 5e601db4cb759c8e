package perf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/internal/hostlimit"
	"cclab/transport"
	"cclab/transport/udp"
)

// ServerConfig configures the receiver.
type ServerConfig struct {
	Listen       string           // UDP address, e.g. ":5301"
	AllowReverse bool             // serve reverse (-R) requests: this receiver then sends
	Once         bool             // stop after the first test flow
	Defaults     transport.Config // config of accepted connections (zero: transport.DefaultConfig())
	QlogDir      string           // write <dir>/<connid>-server.sqlog per flow; "" none
	// Driver holds the socket driver options. Of its Endpoint, the
	// admission limits (MaxConns, MaxHalfOpen, MaxConnsPerSource,
	// MaxConnsPerPrefix, MaxHalfOpenPerSource, MaxHalfOpenPerPrefix,
	// EvictIdle) and ResetKey are used (zero: the defaults, a random key);
	// the server sets the rest.
	Driver udp.Config
	// OnFlow, OnTest and Logf (each may be nil) are called from the
	// connections' own goroutines: concurrently with themselves and with
	// each other, so what they share needs a lock.
	OnFlow       func(FlowSummary)    // called as each flow finishes
	CloseTimeout time.Duration        // how long a finished forward flow waits for the closing handshake (0: DefaultCloseTimeout)
	OnTest       func(TestSummary)    // called once every flow of a several-flow test (-P, --bidir) has finished
	Logf         func(string, ...any) // progress messages
	// Interval, if positive, is the period of each test flow's interval
	// reports (receiver -i): OnInterval (may be nil; called like OnFlow)
	// gets each as it ends, and FlowSummary.Intervals holds them all.
	Interval   time.Duration
	OnInterval func(FlowInterval)

	// Keys, if not nil, are the pre-shared keys a reverse request must
	// prove (auth.go). Without keys, reverse flows are served only to
	// loopback clients.
	Keys *Keys
	// AllowUnauthenticated serves flows without a key beside the
	// authenticated ones when Keys is set (receiver -allow-unauthenticated);
	// otherwise every flow must be authenticated with a key of Keys
	// (authdata.go).
	AllowUnauthenticated bool
	// Caps on reverse requests (docs/security.md); zero means the default.
	MaxReverseBytes    int64         // largest Request.Bytes, bytes (default DefaultMaxReverseBytes)
	MaxReverseDuration time.Duration // longest reverse flow, by request or by the clock (default DefaultMaxReverseDuration; at most MaxReverseSeconds)
	MaxReverseFlows    int           // reverse flows at once (default DefaultMaxReverseFlows)
	ReverseCC          []string      // controllers a request may name (nil: every registered one)
	ReverseCCParams    bool          // a request may set controller parameters (off: names only)

	// Admit, if not nil, decides each test flow (forward or reverse) from
	// its Admission (connection IDs, peer, test ID, admission MAC) before anything is
	// read or sent: an error refuses the flow with its message (counted in
	// NotAdmitted); qlog says whether to write this flow's qlog (with
	// QlogDir; without Admit every flow's is written). cclab agent admits
	// only the transfer its scheduler announced. Admit is called from the
	// connections' own goroutines, so concurrently with itself.
	Admit func(a Admission) (qlog bool, err error)
	// FlowKey, if not nil, returns the admission key of the flow a test ID
	// names (nil: none): that flow's data path must then be authenticated
	// with it (authdata.go), as its client does with ClientConfig.AdmitKey.
	// It is called from the endpoint's goroutine, before Admit. Without Keys,
	// a flow it has no key for is refused (transport.ErrAuthRequired).
	FlowKey func(test string) []byte

	// legacyVerify makes the server ignore Request.Verify, as a receiver
	// older than it does (tests of the digest fallback).
	legacyVerify bool
}

// ErrConfig is wrapped by NewServer's errors about its configuration.
var ErrConfig = errors.New("bad configuration")

// Defaults of the reverse-request caps (receiver flags -max-reverse-bytes,
// -max-reverse-seconds, -max-reverse-flows).
const (
	DefaultMaxReverseBytes    = 1 << 30          // 1 GiB
	DefaultMaxReverseDuration = 60 * time.Second // also bounds a bytes request's duration
	DefaultMaxReverseFlows    = 4
	// MinRTO bounds of a reverse request's min_rto_ms, ms.
	minReverseRTOms = 1
	maxReverseRTOms = 60000
	// maxReports bounds the reverse flows' reports kept for fetching.
	maxReports = 1024
)

// withDefaults fills the caps' zero values and checks them.
func (c *ServerConfig) withDefaults() error {
	if c.MaxReverseBytes == 0 {
		c.MaxReverseBytes = DefaultMaxReverseBytes
	}
	if c.MaxReverseDuration == 0 {
		c.MaxReverseDuration = DefaultMaxReverseDuration
	}
	if c.MaxReverseFlows == 0 {
		c.MaxReverseFlows = DefaultMaxReverseFlows
	}
	switch {
	case c.MaxReverseBytes < 0:
		return fmt.Errorf("-max-reverse-bytes %d: must be positive", c.MaxReverseBytes)
	case c.MaxReverseDuration < 0 || c.MaxReverseDuration > MaxReverseSeconds*time.Second:
		return fmt.Errorf("-max-reverse-seconds %v: must be between 0 and %ds", c.MaxReverseDuration, MaxReverseSeconds)
	case c.MaxReverseFlows < 0 || c.MaxReverseFlows > 1024:
		return fmt.Errorf("-max-reverse-flows %d: must be between 1 and 1024", c.MaxReverseFlows)
	}
	// Normalised into a copy: the caller's slice is not changed.
	c.ReverseCC = slices.Clone(c.ReverseCC)
	for i, name := range c.ReverseCC {
		c.ReverseCC[i] = strings.ToLower(strings.TrimSpace(name))
		if _, ok := ccalgo.Registry.Lookup(c.ReverseCC[i]); !ok {
			return fmt.Errorf("-reverse-cc %q: not a controller (registered controllers: %s)", name, strings.Join(ccalgo.Registry.Names(), ", "))
		}
	}
	return nil
}

// FlowSummary is the receiver's account of one finished flow (receiver -J
// prints one JSON object per flow).
type FlowSummary struct {
	// pathRTT is a forward flow's min RTT as this receiving side measured
	// it (its handshake's sample; the sender's MinRTTms is not known
	// here), for the host report's read_late check.
	pathRTT       time.Duration
	ConnID        string          `json:"conn_id"`
	Peer          string          `json:"peer"`
	Reverse       bool            `json:"reverse"` // this receiver sent
	Bytes         int64           `json:"bytes"`   // stream bytes received (forward) or sent and acknowledged (reverse)
	Seconds       float64         `json:"seconds"`
	ThroughputBps float64         `json:"throughput_bps"`
	Digest        string          `json:"digest"`             // hex SHA-256 of the received (forward) or sent (reverse) stream; "" with Verify VerifyPattern
	Verify        string          `json:"verify,omitempty"`   // VerifyPattern: compared with the pattern (forward) or not hashed (reverse); "": SHA-256 Digest
	Mismatch      *int64          `json:"mismatch,omitempty"` // forward VerifyPattern: offset of the first stream byte that differed from the pattern, bytes; absent: none
	Retransmits   int64           `json:"retransmits,omitempty"`
	RTOs          int64           `json:"rtos,omitempty"`
	MinRTTms      float64         `json:"min_rtt_ms,omitempty"`
	MeanSRTTms    float64         `json:"mean_srtt_ms,omitempty"`
	CC            string          `json:"cc,omitempty"`
	Recovery      string          `json:"recovery,omitempty"`
	Error         string          `json:"error,omitempty"`
	Mode          string          `json:"mode,omitempty"`       // "datagram" for a datagram-mode flow (dgram.go)
	Dgram         *DgramReport    `json:"dgram,omitempty"`      // its receiver account
	CloseNote     string          `json:"close_note,omitempty"` // the closing handshake failed after the whole stream arrived and its report went out (not an error)
	Test          string          `json:"test_id,omitempty"`    // the sender's test ID (-P, --bidir)
	Flows         int             `json:"flows,omitempty"`      // flows in that test
	ECN           *ECNResult      `json:"ecn,omitempty"`        // this side's half of the ECN account, when negotiated
	Auth          *AuthResult     `json:"auth,omitempty"`       // this side's account of an authenticated flow (authdata.go)
	Endpoint      *EndpointCounts `json:"endpoint,omitempty"`   // the receiver endpoint's admission counters when the flow ended (totals since it started)
	Intervals     []RecvInterval  `json:"intervals,omitempty"`  // the interval reports (ServerConfig.Interval)
	// Host is what limited this process besides the network during the
	// flow (docs/metrics.md, "Host-limited runs").
	Host *hostlimit.Report `json:"host_limit,omitempty"`
}

// Server is a running receiver.
type Server struct {
	cfg ServerConfig
	ep  *udp.Endpoint

	mu      sync.Mutex
	reports map[uint64]*pending     // reverse flows' reports, by connection ID
	tests   map[string]*TestSummary // several-flow tests still running, by test ID
	stats   ServerStats
	wg      sync.WaitGroup

	chal    challenges    // server nonces handed out (auth.go)
	revSlot chan struct{} // one token per running reverse flow
}

// ServerStats counts what a Server did with the connections it accepted.
type ServerStats struct {
	Forward         uint64 // forward test flows served
	Reverse         uint64 // reverse test flows served
	Reports         uint64 // report fetches answered
	BadRequests     uint64 // requests refused as malformed or of another protocol version
	ReverseRefused  uint64 // reverse requests refused (no -allow-reverse, not loopback without a key, too many at once)
	AuthFailed      uint64 // hellos and reverse requests refused for an unknown key, a bad MAC or a stale nonce
	Challenges      uint64 // server nonces handed out
	BadParameters   uint64 // reverse requests refused for an unknown, disallowed or out-of-range controller, strategy, size or duration
	FailedTransfers uint64 // test flows that ended with an error (refusals included)
	NotAdmitted     uint64 // test flows refused by ServerConfig.Admit
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *Server) count(f func(*ServerStats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// NewServer opens the socket and starts the endpoint.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = fmt.Sprintf(":%d", DefaultPort)
	}
	if err := cfg.withDefaults(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	s := &Server{cfg: cfg, reports: map[uint64]*pending{}, tests: map[string]*TestSummary{}, revSlot: make(chan struct{}, cfg.MaxReverseFlows)}
	d := cfg.Defaults
	if d.MaxDatagram == 0 {
		d = transport.DefaultConfig()
		// Accept what the sender chooses with -size: a connection uses the
		// smaller of the two ends' MaxDatagram.
		d.MaxDatagram = MaxSize
	}
	dc := cfg.Driver
	dc.Endpoint = Limits(cfg.Driver.Endpoint)
	dc.Endpoint.Server, dc.Endpoint.Defaults, dc.Endpoint.Configure = true, d, s.configure
	dc.Endpoint.Dgram = dgramEndpointConfig() // one port serves both modes (dgram.go)
	switch {
	case cfg.Keys != nil:
		dc.Endpoint.PSK, dc.Endpoint.AllowUnauthenticated = keyLookup(cfg.Keys), cfg.AllowUnauthenticated
	case cfg.FlowKey != nil:
		// Every flow is authenticated with its own admission key
		// (configure); one naming no flow is refused by the transport.
		dc.Endpoint.PSK = func(string) []byte { return nil }
	}
	ep, err := udp.Listen(cfg.Listen, dc)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %v", cfg.Listen, err)
	}
	s.ep = ep
	return s, nil
}

// Addr returns the bound address.
func (s *Server) Addr() netip.AddrPort { return s.ep.LocalAddr() }

// EndpointStats returns the counters of the server's transport endpoint
// (datagrams and bytes in and out, Retries, half-open connections, rejects).
func (s *Server) EndpointStats() transport.EndpointStats { return s.ep.Stats() }

// Close stops the server at once (running flows fail).
func (s *Server) Close() error { return s.ep.Close() }

// Abort aborts the running stream connection connID, if there is one (the
// peer learns it at once; its flow ends with an error). cclab agent uses it
// to end a transfer that outlived its caps.
func (s *Server) Abort(connID uint64) {
	s.ep.Do(func(now clock.Time, ep *transport.Endpoint) {
		for _, c := range ep.Conns() {
			if c.ID() == connID && !c.Done() {
				c.Abort(now)
			}
		}
	})
}

// shutdown aborts the connections still running (their peers learn it at
// once instead of by idle timeout) and closes the endpoint, which unblocks
// the flows' goroutines.
func (s *Server) shutdown() {
	s.ep.Do(func(now clock.Time, ep *transport.Endpoint) {
		for _, c := range ep.Conns() {
			if !c.Done() {
				c.Abort(now)
			}
		}
	})
	s.ep.Close()
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// Serve accepts connections until ctx ends (or, with Once, until the first
// test flow is done) and serves each in its own goroutine.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.startDgrams(ctx, cancel)
	for {
		c, err := s.ep.Accept(ctx)
		if err != nil {
			s.shutdown()
			s.wg.Wait()
			if errors.Is(err, context.Canceled) || errors.Is(err, udp.ErrClosed) {
				return nil
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			isTest, p := s.serve(ctx, c)
			if isTest && s.cfg.Once {
				if p != nil {
					// A reverse flow's client still has to fetch the report.
					select {
					case <-p.fetched:
					case <-time.After(30 * time.Second):
					case <-ctx.Done():
					}
				}
				cancel()
			}
		}()
	}
}

// serve handles one connection; it reports whether it was a test flow
// (rather than a report fetch), and for a reverse flow the pending report.
func (s *Server) serve(ctx context.Context, c *udp.Conn) (bool, *pending) {
	id := c.ID()
	peer := c.Peer()
	sum := FlowSummary{ConnID: fmt.Sprintf("%016x", id), Peer: peer.String()}
	req, err := parseRequest(c.Request())
	if err != nil {
		s.count(func(st *ServerStats) { st.BadRequests++ })
		s.refuse(ctx, c, err.Error())
		sum.Error = err.Error()
		return s.finish(sum), nil
	}
	sum.Test, sum.Flows = req.Test, req.Flows
	if s.cfg.legacyVerify {
		req.Verify = ""
	}
	if req.Results != 0 {
		s.count(func(st *ServerStats) { st.Reports++ })
		s.serveReport(ctx, c, req.Results)
		return false, nil
	}
	if req.Hello != "" {
		s.serveHello(ctx, c, req)
		return false, nil
	}
	qlog := s.cfg.QlogDir != ""
	if s.cfg.Admit != nil {
		var err error
		if qlog, err = s.cfg.Admit(Admission{ConnID: id, InitialDCID: c.InitialDCID(), Peer: peer, Test: req.Test, MAC: req.MAC}); err != nil {
			s.count(func(st *ServerStats) { st.NotAdmitted++ })
			s.refuse(ctx, c, err.Error())
			sum.Error = err.Error()
			return s.finish(sum), nil
		}
		qlog = qlog && s.cfg.QlogDir != ""
	}
	// The flow runs (and its qlog is closed) before finish reports it.
	hw := watchHost(s.ep)
	p := s.serveTest(ctx, c, req, &sum, qlog)
	if sum.Error == "" {
		role := RoleReceiver
		if sum.Reverse {
			role = RoleSender
		}
		sum.Host = hw.report(role, func(h *hostlimit.Report) { h.MinRTT = cmp.Or(msDuration(sum.MinRTTms), sum.pathRTT) })
	}
	return s.finish(sum), p
}

// serveTest runs an admitted test flow, writing its qlog when asked; it
// returns a reverse flow's pending report.
func (s *Server) serveTest(ctx context.Context, c *udp.Conn, req Request, sum *FlowSummary, qlog bool) *pending {
	var fs *flowSink
	c.Do(func(_ clock.Time, tc *transport.Conn) { fs, _ = tc.Config().Sink.(*flowSink) })
	if fs != nil && qlog {
		if ql, err := openQlog(s.cfg.QlogDir, c.ID(), "server", &ClientConfig{Addr: c.Peer().String(), CC: req.CC, Recovery: req.Recovery}, s.ep.Now()); err == nil {
			c.Do(func(clock.Time, *transport.Conn) { fs.ql = ql })
			defer func() {
				c.Do(func(now clock.Time, tc *transport.Conn) { fs.ql = nil; qlogAuth(ql, now, streamAuth(tc.Stats())) })
				ql.Close()
			}()
		} else {
			s.logf("%v", err)
		}
	}
	if req.Reverse {
		sum.Reverse = true
		if msg, counter := s.admitReverse(c, req); msg != "" {
			s.count(counter)
			s.refuse(ctx, c, msg)
			sum.Error = msg
			return nil
		}
		defer func() { <-s.revSlot }()
		return s.serveReverse(ctx, c, req, sum)
	}
	s.serveForward(ctx, c, req, sum)
	return nil
}

// finish accounts for a finished test flow and reports whether its test is
// complete: a single flow, or the last of a several-flow test, whose
// TestSummary then goes to OnTest.
func (s *Server) finish(sum FlowSummary) bool {
	s.count(func(st *ServerStats) {
		switch {
		case sum.Error != "":
			st.FailedTransfers++
		case sum.Reverse:
			st.Reverse++
		default:
			st.Forward++
		}
	})
	if s.cfg.OnFlow != nil {
		sum.Endpoint = endpointCounts(s.ep.Stats())
		s.cfg.OnFlow(sum)
	}
	return s.finishTest(sum)
}

// maxTests bounds the several-flow tests tracked at once (a test whose
// flows never all arrive would otherwise stay).
const maxTests = 1024

// finishTest adds a finished flow to its test's summary and reports the
// test once its last flow is in; it reports whether the test is complete.
func (s *Server) finishTest(sum FlowSummary) bool {
	if sum.Flows < 2 {
		return true
	}
	s.mu.Lock()
	t := s.tests[sum.Test]
	if t == nil {
		if len(s.tests) >= maxTests {
			clear(s.tests)
		}
		t = &TestSummary{Test: sum.Test, Peer: sum.Peer, Flows: sum.Flows}
		s.tests[sum.Test] = t
	}
	t.Done++
	if sum.Error != "" {
		t.Failed++
	} else if sum.Reverse {
		t.SentBytes += sum.Bytes
		t.SentBps += sum.ThroughputBps
	} else {
		t.ReceivedBytes += sum.Bytes
		t.ReceivedBps += sum.ThroughputBps
	}
	t.Seconds = max(t.Seconds, sum.Seconds)
	done := t.Done == t.Flows
	if done {
		delete(s.tests, sum.Test)
	}
	s.mu.Unlock()
	if done && s.cfg.OnTest != nil {
		s.cfg.OnTest(*t)
	}
	return done
}

// TestSummary sums the flows of a several-flow test (sender -P N, --bidir)
// at the receiver.
type TestSummary struct {
	Test          string  `json:"test_id"`
	Peer          string  `json:"peer"`           // the first flow's peer
	Flows         int     `json:"flows"`          // flows in the test
	Done          int     `json:"-"`              // flows finished so far
	Failed        int     `json:"failed"`         // flows that failed
	Seconds       float64 `json:"seconds"`        // the longest flow, s
	ReceivedBytes int64   `json:"received_bytes"` // forward flows' bytes
	ReceivedBps   float64 `json:"received_bps"`   // forward flows' goodputs added, bit/s
	SentBytes     int64   `json:"sent_bytes"`     // reverse flows' bytes sent and acknowledged
	SentBps       float64 `json:"sent_bps"`       // reverse flows' goodputs added, bit/s
}

// refuse answers with an error report and closes.
func (s *Server) refuse(ctx context.Context, c *udp.Conn, msg string) {
	s.logf("%016x from %v: %s", c.ID(), c.Peer(), msg)
	_, _ = c.Write(mustJSON(Report{V: Version, Error: msg}))
	c.CloseWrite()
	s.drain(ctx, c)
}

// drain discards what the peer sends until EOF and waits for the close.
func (s *Server) drain(ctx context.Context, c *udp.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_ = c.Wait(wctx)
}

// serveForward reads the client's stream to EOF, checks it (streamCheck)
// and reports the check.
func (s *Server) serveForward(ctx context.Context, c *udp.Conn, req Request, sum *FlowSummary) {
	buf := make([]byte, 256<<10)
	var t0 time.Time
	var got int64
	var delivered atomic.Int64 // got, for the interval meter
	var rerr error
	chk := newStreamCheck(req.Verify, req.Seed)
	im := s.startIntervals(FlowInterval{ConnID: sum.ConnID, Peer: sum.Peer}, func() flowCounters { return flowCounters{bytes: delivered.Load()} })
	for {
		n, err := c.Read(buf)
		if n > 0 && got == 0 {
			t0 = time.Now()
		}
		chk.write(buf[:n])
		got += int64(n)
		delivered.Store(got)
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	sum.Intervals = im.finish()
	elapsed := time.Since(t0)
	if t0.IsZero() {
		elapsed = 0
	}
	cs := c.Stats()
	sum.pathRTT = cs.MinRTT
	if cs.ECN {
		sum.ECN = &ECNResult{Negotiated: true}
		ecnReceiving(cs, sum.ECN)
	}
	sum.Auth = streamAuth(cs)
	sum.Bytes, sum.Seconds = got, elapsed.Seconds()
	sum.Digest = chk.digest()
	if chk.kind() == VerifyPattern {
		sum.Verify, sum.Mismatch = VerifyPattern, chk.mismatch()
	}
	if sum.Seconds > 0 {
		sum.ThroughputBps = float64(got) * 8 / sum.Seconds
	}
	if rerr != nil {
		sum.Error = rerr.Error()
		return
	}
	rep := Report{V: Version, Bytes: got, Digest: sum.Digest, Seconds: sum.Seconds, ECN: sum.ECN,
		Verify: sum.Verify, Mismatch: sum.Mismatch}
	if _, err := c.Write(mustJSON(rep)); err != nil {
		sum.Error = err.Error()
		return
	}
	c.CloseWrite()
	wctx, cancel := context.WithTimeout(ctx, s.closeTimeout())
	defer cancel()
	if err := c.Wait(wctx); err != nil {
		// The whole stream arrived and its report went out: this side's
		// transfer is complete. Only the closing handshake failed (e.g. a
		// relay on the path stopped right after the sender had its result,
		// taking the last ACK with it): a note, not a failed flow.
		sum.CloseNote = "closing: " + err.Error()
		c.Do(func(now clock.Time, tc *transport.Conn) { tc.Abort(now) }) // free it; the peer is gone or done
	}
}

// closeTimeout is how long a flow waits for the peer to finish the closing
// handshake.
func (s *Server) closeTimeout() time.Duration {
	if s.cfg.CloseTimeout > 0 {
		return s.cfg.CloseTimeout
	}
	return DefaultCloseTimeout
}

// DefaultCloseTimeout is ServerConfig.CloseTimeout's default.
const DefaultCloseTimeout = 30 * time.Second

// validateRecovery checks a recovery strategy spec and names the registered ones.
func validateRecovery(spec string) error {
	if err := transport.Recoveries.Validate(spec); err != nil {
		return fmt.Errorf("-recovery %q: %v (registered strategies: %s)", spec, err, strings.Join(transport.Recoveries.Names(), ", "))
	}
	return nil
}

func validateCC(spec string) error {
	if err := ccalgo.Registry.Validate(spec); err != nil {
		return fmt.Errorf("cc %q: %v (registered controllers: %s)", spec, err, strings.Join(ccalgo.Registry.Names(), ", "))
	}
	return nil
}
