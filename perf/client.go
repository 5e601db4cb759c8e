package perf

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/internal/hostlimit"
	"cclab/internal/qlog"
	"cclab/transport"
	"cclab/transport/udp"
)

// ClientConfig describes one test run by the client (cmd/sender).
type ClientConfig struct {
	Addr     string        // receiver "host:port"
	Bytes    int64         // -n: stream bytes to send; 0: use Duration
	Duration time.Duration // -t: send for this long if Bytes is 0 (default 10 s)
	CC       string        // controller spec at the sending side (default transport.DefaultCC)
	Recovery string        // recovery strategy at the sending side (default transport.DefaultRecovery)
	MinRTO   time.Duration // 0: transport default
	ECN      bool          // send ECT(0) and react to ECN-Echo
	Size     int           // max datagram (UDP payload), bytes; 0: the transport default, raised by datagram size discovery (RFC 8899) up to the route's MTU
	Reverse  bool          // the receiver sends
	Seed     uint64        // pattern seed; 0: random
	Verify   string        // -verify: VerifyPattern (default: compare with the pattern) or VerifySHA256 (digests)
	RateCap  float64       // -b: the sending application writes at most this many bits/s (iperf3's -b for TCP); 0: no cap; not with Reverse
	// Receive holds this side's receiving settings (the data it receives
	// in reverse and bidir tests): AckEvery, DelayedAck and RecvWindow of
	// transport.Config; zero fields take the transport's defaults.
	Receive transport.Config

	Interval   time.Duration        // -i: interval length; 0: no intervals
	Omit       time.Duration        // -O: leave the first Omit out of the summary's goodput (its intervals are marked omitted)
	Start      time.Time            // interval origin shared by parallel flows (zero: the flow's own start)
	Test       string               // test ID shared by the flows of one sender run (hex; "" none)
	Flows      int                  // flows in the test (-P, times 2 with bidir); 0 or 1: a single flow
	OnInterval func(iv Interval)    // called for each interval as it ends (may be nil)
	QlogDir    string               // -qlog: write <dir>/<connid>-client.sqlog; "" none
	Sink       event.Sink           // extra event sink (may be nil)
	Timeout    time.Duration        // handshake timeout; 0: transport default
	Endpoint   *udp.Endpoint        // use this endpoint instead of opening a socket (may be nil)
	Driver     udp.Config           // socket driver options when Endpoint is nil
	Logf       func(string, ...any) // progress messages (may be nil)
	Keys       *Keys                // -psk-file: authenticate the flows (and reverse requests) with the first key (may be nil)
	Encrypt    bool                 // -psk-encrypt: with Keys, encrypt the flows' packets too
	// AdmitKey, with Test, makes the Initial's request carry the admission
	// MAC of this connection under this key (admission.go; cclab agent's
	// data flows), and authenticates the flow's data path with it as a
	// pre-shared key (authdata.go); the key itself is never sent.
	AdmitKey []byte

	tc transport.Config // the settings of every connection of a Run (newTransportConfig), built once
}

// Validate checks the names and values of cfg and fills defaults. Unknown
// controllers and strategies are reported with the registered names.
func (c *ClientConfig) Validate() error {
	if c.Addr == "" {
		return errors.New("no receiver address (-c host:port)")
	}
	if c.CC == "" {
		c.CC = transport.DefaultCC
	}
	if c.Recovery == "" {
		c.Recovery = transport.DefaultRecovery
	}
	if err := ccalgo.Registry.Validate(c.CC); err != nil {
		return fmt.Errorf("-cc %q: %v (registered controllers: %s)", c.CC, err, strings.Join(ccalgo.Registry.Names(), ", "))
	}
	if err := validateRecovery(c.Recovery); err != nil {
		return err
	}
	if c.Bytes < 0 {
		return fmt.Errorf("-n %d: must be positive", c.Bytes)
	}
	if c.Bytes == 0 && c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.RateCap < 0 || c.RateCap > 0 && c.Reverse {
		return fmt.Errorf("-b %g: a rate cap must be positive, and applies to the sending side only (not with -R)", c.RateCap)
	}
	if c.Duration < 0 {
		return fmt.Errorf("-t %v: must be positive", c.Duration)
	}
	if c.Duration > MaxReverseSeconds*time.Second && c.Reverse {
		return fmt.Errorf("-t %v: reverse transfers are limited to %ds", c.Duration, MaxReverseSeconds)
	}
	if c.Size != 0 && (c.Size < transport.MinDatagram || c.Size > MaxSize) {
		return fmt.Errorf("-size %d: must be between %d and %d bytes (0: the default %d)", c.Size, transport.MinDatagram, MaxSize, transport.DefaultMaxDatagram)
	}
	if w := c.Receive.RecvWindow; w != 0 {
		if err := transport.CheckRecvWindow(w, cmp.Or(c.Size, transport.DefaultMaxDatagram)); err != nil {
			return fmt.Errorf("-window %d: %v", w, err)
		}
	}
	if c.MinRTO < 0 {
		return fmt.Errorf("-min-rto %v: must not be negative", c.MinRTO)
	}
	if len(c.AdmitKey) > 0 && c.Test == "" {
		return errors.New("an admission key needs a test ID (ClientConfig.Test)")
	}
	if c.Interval < 0 {
		return fmt.Errorf("-i %v: must not be negative (0: no intervals)", c.Interval)
	}
	if c.Omit < 0 {
		return fmt.Errorf("-O %v: must not be negative", c.Omit)
	}
	if c.Flows < 0 || c.Flows > MaxFlows {
		return fmt.Errorf("flows %d: must be between 1 and %d", c.Flows, MaxFlows)
	}
	switch c.Verify {
	case "":
		c.Verify = VerifyPattern
	case VerifyPattern, VerifySHA256:
	default:
		return fmt.Errorf("-verify %q: want %s or %s", c.Verify, VerifyPattern, VerifySHA256)
	}
	if c.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	return nil
}

// resolve turns "host:port" into an address, defaulting the port.
func resolve(addr string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// No port given: use the default.
		host, port = addr, fmt.Sprint(DefaultPort)
	}
	ua, err := net.ResolveUDPAddr("udp", net.JoinHostPort(host, port))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("receiver address %q: %v", addr, err)
	}
	ap := ua.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// dialEndpoint resolves the receiver address addr and returns it with ep,
// or if ep is nil a new Endpoint on a socket connected to it (owned: the
// caller closes it).
func dialEndpoint(addr string, ep *udp.Endpoint, driver udp.Config) (peer netip.AddrPort, _ *udp.Endpoint, owned bool, err error) {
	if peer, err = resolve(addr); err != nil {
		return peer, nil, false, err
	}
	if ep != nil {
		return peer, ep, false, nil
	}
	if ep, err = udp.DialSocket(peer.String(), driver); err != nil {
		return peer, nil, false, fmt.Errorf("open socket to %v: %v", peer, err)
	}
	return peer, ep, true, nil
}

// newTransportConfig builds the transport settings of the client's
// connections on an endpoint whose route carries UDP payloads up to
// pathMax bytes (udp.Endpoint.PathMaxPayload; 0: unknown).
func (c *ClientConfig) newTransportConfig(pathMax int) transport.Config {
	tc := transport.DefaultConfig()
	tc.CC = c.CC
	tc.Recovery = c.Recovery
	if c.MinRTO > 0 {
		tc.MinRTO = c.MinRTO
	}
	if c.Size > 0 {
		tc.MaxDatagram = c.Size
	} else if pathMax > tc.MaxDatagram {
		tc.PLPMTUMax = pathMax // datagram size discovery (RFC 8899) up to the route's size
	}
	if c.Timeout > 0 {
		tc.HandshakeTimeout = c.Timeout
	}
	tc.ECN = c.ECN
	tc.SetReceiving(c.Receive)
	tc.Digest = "none" // perf verifies with its own digests (digest.go)
	tc.PSK, tc.PSKName = pskFor(c.Keys)
	tc.Encrypt = c.Encrypt
	return tc
}

// transportConfig is the transport Config of one connection: the Run's
// settings with the connection's request and event sink.
func (c *ClientConfig) transportConfig(req Request, sink event.Sink) transport.Config {
	tc := c.tc
	tc.Request = req.encode()
	tc.Sink = sink
	return tc
}

// request is the Request of the Run's data connection.
func (c *ClientConfig) request() Request {
	req := Request{V: Version, Reverse: c.Reverse, Seed: c.Seed, Test: c.Test, ECN: c.ECN}
	if c.Verify == VerifyPattern {
		req.Verify = VerifyPattern
	}
	if c.Flows > 1 {
		req.Flows = c.Flows
	}
	if c.Reverse {
		req.Bytes, req.Seconds = c.Bytes, c.Duration.Seconds()
		if req.Bytes > 0 {
			req.Seconds = 0
		}
		req.CC, req.Recovery = c.CC, c.Recovery
		req.MinRTOms = ms(c.MinRTO)
	}
	return req
}

// Run runs one test against a receiver and returns its result. The error is
// non-nil when the receiver is unreachable, refuses the request, the
// transfer fails, or verification fails (the Result is then still filled as
// far as it got).
func Run(ctx context.Context, cfg ClientConfig) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	peer, ep, owned, err := dialEndpoint(cfg.Addr, cfg.Endpoint, cfg.Driver)
	if err != nil {
		return nil, err
	}
	if owned {
		defer ep.Close()
	}
	cfg.tc = cfg.newTransportConfig(ep.PathMaxPayload())

	req := cfg.request()

	// With a key, a reverse request answers a server nonce (auth.go).
	var macLine []byte
	if cfg.Reverse && cfg.Keys != nil {
		if macLine, err = authenticate(ctx, ep, peer, &cfg, &req); err != nil {
			return nil, err
		}
	}

	// Events go to cfg.Sink and, with -qlog, to a qlog file named after the
	// connection ID, which is known only after Dial: the sink is set then,
	// under the driver's lock (sinks are called under it).
	var sink *flowSink
	var tsink event.Sink
	if cfg.Sink != nil || cfg.QlogDir != "" {
		sink = &flowSink{extra: cfg.Sink}
		tsink = sink
	}
	startWall := time.Now()
	tc := cfg.transportConfig(req, tsink)
	if len(cfg.AdmitKey) > 0 {
		tc.SealRequest = sealRequest(req, cfg.AdmitKey)
		tc.PSK = cfg.AdmitKey // the data path authenticated with it too (ServerConfig.FlowKey)
	}
	conn, err := ep.Dial(ctx, peer, tc)
	if err != nil {
		return nil, authHint(err)
	}
	id := conn.ID()
	hw := watchHost(ep)
	cfg.logf("connected to %s: connection %016x, %s", peer, id, direction(cfg.Reverse))
	if macLine != nil {
		if _, err := conn.Write(macLine); err != nil {
			return nil, fmt.Errorf("sending the MAC: %w", err)
		}
	}
	if cfg.QlogDir != "" {
		ql, err := openQlog(cfg.QlogDir, id, "client", &cfg, ep.Now())
		if err != nil {
			conn.Do(func(now clock.Time, tc *transport.Conn) { tc.Abort(now) })
			return nil, err
		}
		conn.Do(func(clock.Time, *transport.Conn) { sink.ql = ql })
		defer func() {
			conn.Do(func(now clock.Time, tc *transport.Conn) { sink.ql = nil; qlogAuth(ql, now, streamAuth(tc.Stats())) })
			ql.Close()
		}()
	}

	res := &Result{Start: Start{
		Timestamp: startWall.UTC().Format(time.RFC3339Nano), ConnectTo: peer.String(),
		Local: ep.LocalAddr().String(), ConnID: fmt.Sprintf("%016x", id), Reverse: cfg.Reverse,
		CC: cfg.CC, Recovery: cfg.Recovery, Bytes: cfg.Bytes, MaxDatagram: tc.MaxDatagram,
		MinRTOms: ms(cfg.MinRTO), ECN: cfg.ECN, Seed: cfg.Seed, Interval: cfg.Interval.Seconds(),
		Omit: cfg.Omit.Seconds(), Test: cfg.Test, Flows: max(cfg.Flows, 1),
	}}
	if cfg.Bytes == 0 {
		res.Start.Seconds = cfg.Duration.Seconds()
	}
	res.Intervals = []Interval{}
	res.End = End{CC: cfg.CC, Recovery: cfg.Recovery, Reverse: cfg.Reverse}

	// Cancelling ctx (e.g. Ctrl-C) aborts the connection, which unblocks
	// its reads and tells the receiver at once.
	stop := context.AfterFunc(ctx, func() {
		conn.Do(func(now clock.Time, tc *transport.Conn) { tc.Abort(now) })
	})
	defer stop()
	if cfg.Reverse {
		err = runReverse(ctx, ep, peer, conn, &cfg, res)
	} else {
		err = runForward(ctx, conn, &cfg, res)
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("interrupted: %w", ctx.Err())
	}
	role := RoleSender
	if cfg.Reverse {
		role = RoleReceiver
	}
	res.End.Host = hw.report(role, func(h *hostlimit.Report) { h.MinRTT = msDuration(res.End.MinRTTms) })
	if err != nil {
		res.End.Error = err.Error()
		return res, err
	}
	if !res.End.Verified {
		err = fmt.Errorf("verification failed: receiver's digest %s (%d bytes) differs from sender's %s (%d bytes)",
			short(res.End.ReceiverDigest), res.End.Bytes, short(res.End.SenderDigest), res.End.SenderBytes)
		res.End.Error = err.Error()
		return res, err
	}
	cfg.logf("connection %016x done: %d bytes verified", id, res.End.Bytes)
	return res, nil
}

// logf writes a progress message to Logf, if set.
func (c *ClientConfig) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// direction names the direction of a test's data for progress messages.
func direction(reverse bool) string {
	if reverse {
		return "the server sends (reverse)"
	}
	return "this client sends"
}

// authenticate fetches a server nonce on a hello connection, checks the
// server's proof of the key, and completes req (Key, Nonce); it returns the
// MAC line the data connection's stream starts with.
func authenticate(ctx context.Context, ep *udp.Endpoint, peer netip.AddrPort, cfg *ClientConfig, req *Request) ([]byte, error) {
	name := cfg.Keys.First()
	key, _ := cfg.Keys.Key(name)
	cn := newNonce()
	hc, err := ep.Dial(ctx, peer, cfg.transportConfig(Request{V: Version, Hello: hex.EncodeToString(cn), Key: name}, nil))
	if err != nil {
		return nil, authHint(err)
	}
	hc.CloseWrite()
	msg, err := readAll(hc, maxMessage)
	if err != nil {
		return nil, fmt.Errorf("authenticating: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = hc.Wait(wctx)
	cancel()
	rep, err := parseReport(msg)
	if err != nil {
		return nil, err
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("receiver refused: %s", rep.Error)
	}
	sn, ok := decodeNonce(rep.Challenge)
	proof, perr := hex.DecodeString(rep.Proof)
	if !ok || perr != nil || !hmac.Equal(proof, authMAC(key, labelServer, cn, sn)) {
		return nil, fmt.Errorf("authentication failed: the receiver does not hold key %q (wrong -psk-file, or not the receiver you meant)", name)
	}
	req.Key, req.Nonce = name, rep.Challenge
	line := mustJSON(authLine{MAC: hex.EncodeToString(authMAC(key, labelReverse, sn, req.encode()))})
	return append(line, '\n'), nil
}

func short(d string) string {
	if len(d) > 16 {
		return d[:16] + "…"
	}
	return d
}

// flowSink receives one connection's events (called under the driver's
// lock, so its fields are set under that lock too).
type flowSink struct {
	ql    *qlog.Writer // nil: no qlog
	extra event.Sink   // nil: none
}

// Record forwards e.
func (f *flowSink) Record(e *event.Event) {
	if f.ql != nil {
		f.ql.Record(e)
	}
	if f.extra != nil {
		f.extra.Record(e)
	}
}

func openQlog(dir string, id uint64, vantage string, cfg *ClientConfig, ref clock.Time) (*qlog.Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-qlog: %v", err)
	}
	name := filepath.Join(dir, fmt.Sprintf("%016x-%s.sqlog", id, vantage))
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("-qlog: %v", err)
	}
	h := qlog.Header{Title: "cclab " + vantage + " " + cfg.Addr, VantagePoint: vantage,
		GroupID: fmt.Sprintf("%016x", id), Reference: ref, WallClock: time.Now()}
	if cfg != nil {
		h.CC, h.Recovery = cfg.CC, cfg.Recovery
	}
	return qlog.NewWriter(f, h), nil
}

// readAll reads the conn to EOF, keeping at most max bytes.
func readAll(c *udp.Conn, max int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if len(out)+n > max {
			return nil, fmt.Errorf("message from peer longer than %d bytes", max)
		}
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// sampler returns a connection's (bytes so far, retransmits so far, cwnd,
// srtt).
type sampler func() (bytes, retrans int64, cwnd int, srtt time.Duration)

// omitMark is what a flow had done when the omitted period (-O) ended.
type omitMark struct {
	reached bool
	bytes   int64
}

// intervals samples a flow every cfg.Interval on boundaries k·Interval
// after the origin (cfg.Start, or the flow's start), so that parallel
// flows' intervals line up, and once at the end of the omitted period.
type intervals struct {
	quit, done chan struct{}
	out        *[]Interval
	omit       omitMark
}

// startIntervals appends an Interval to *out at every interval boundary, in
// a goroutine of its own until the returned stop is called; stop samples
// once more and keeps the last, partial interval, then returns once the
// goroutine has ended (then *out and the omit mark may be read).
func startIntervals(cfg *ClientConfig, t0 time.Time, sample sampler, out *[]Interval) *intervals {
	iv := &intervals{quit: make(chan struct{}), done: make(chan struct{}), out: out}
	origin := t0
	if !cfg.Start.IsZero() {
		origin = cfg.Start
	}
	go func() {
		defer close(iv.done)
		iv.run(cfg, origin, sample)
	}()
	return iv
}

// stop ends the sampling (once) and waits for it.
func (iv *intervals) stop() {
	select {
	case <-iv.quit:
	default:
		close(iv.quit)
	}
	<-iv.done
}

// minPartial is the shortest last, partial interval kept, s.
const minPartial = 0.001

func (iv *intervals) run(cfg *ClientConfig, origin time.Time, sample sampler) {
	var lastB, lastR int64
	last := 0.0
	emit := func(now time.Time) {
		b, r, cw, srtt := sample()
		end := now.Sub(origin).Seconds()
		x := Interval{Start: last, End: end, Bytes: b - lastB, Retransmits: r - lastR, Cwnd: cw, SRTTms: ms(srtt)}
		if end > last {
			x.BitsPerSec = float64(x.Bytes) * 8 / (end - last)
		}
		x.Omitted = cfg.Omit > 0 && end <= cfg.Omit.Seconds()+minPartial
		lastB, lastR, last = b, r, end
		*iv.out = append(*iv.out, x)
		if cfg.OnInterval != nil {
			cfg.OnInterval(x)
		}
	}
	k := 1
	omitAt := time.Time{}
	if cfg.Omit > 0 {
		omitAt = origin.Add(cfg.Omit)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := time.Time{}
		if cfg.Interval > 0 {
			next = origin.Add(time.Duration(k) * cfg.Interval)
		}
		if !omitAt.IsZero() && !iv.omit.reached && (next.IsZero() || omitAt.Before(next)) {
			next = omitAt
		}
		if next.IsZero() {
			<-iv.quit
			return
		}
		timer.Reset(time.Until(next))
		select {
		case <-iv.quit:
			if now := time.Now(); cfg.Interval > 0 && now.Sub(origin).Seconds()-last >= minPartial {
				emit(now) // the last, partial interval
			}
			return
		case now := <-timer.C:
			if !omitAt.IsZero() && !iv.omit.reached && !now.Before(omitAt) {
				iv.omit.reached = true
				iv.omit.bytes, _, _, _ = sample()
			}
			if cfg.Interval > 0 && !now.Before(origin.Add(time.Duration(k)*cfg.Interval)) {
				emit(now)
				k++
			}
		}
	}
}

// applyOmit makes e's goodput leave out the omitted period (-O) if the
// transfer lasted beyond it.
func applyOmit(cfg *ClientConfig, e *End, m omitMark, t0 time.Time) {
	if cfg.Omit <= 0 || !m.reached {
		return
	}
	origin := t0
	if !cfg.Start.IsZero() {
		origin = cfg.Start
	}
	// The omitted period counts from the flow's origin; the transfer's own
	// clock (Seconds) from t0.
	om := cfg.Omit.Seconds() - t0.Sub(origin).Seconds()
	if om <= 0 || om >= e.Seconds {
		return
	}
	e.OmittedSeconds, e.OmittedBytes = om, m.bytes
	e.ThroughputBps = float64(max(e.Bytes-m.bytes, 0)) * 8 / (e.Seconds - om)
}

// runForward: we send, the receiver reports its digest.
func runForward(ctx context.Context, conn *udp.Conn, cfg *ClientConfig, res *Result) error {
	length := cfg.Bytes
	if length == 0 {
		length = -1
	}
	t0 := time.Now()
	if cfg.RateCap > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go capWrites(conn, transport.NewPatternSource(cfg.Seed), cfg, t0, stop)
	} else {
		conn.SetSource(transport.NewPatternSource(cfg.Seed), length)
	}
	ivs := startIntervals(cfg, t0, func() (int64, int64, int, time.Duration) {
		s := snapshot(conn.Stats())
		return s.ackedBytes, s.retransmits, s.cwnd, s.srtt
	}, &res.Intervals)
	if cfg.Bytes == 0 && cfg.RateCap == 0 {
		timer := time.AfterFunc(cfg.Duration, conn.CloseWrite)
		defer timer.Stop()
	}
	msg, err := readAll(conn, maxMessage)
	elapsed := time.Since(t0)
	ivs.stop()
	if err != nil {
		return fmt.Errorf("transfer failed: %w", err)
	}
	rep, err := parseReport(msg)
	if err != nil {
		return err
	}
	if rep.Error != "" {
		return fmt.Errorf("receiver refused: %s", rep.Error)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Wait(wctx); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	cs := conn.Stats()
	s := snapshot(cs)
	e := &res.End
	e.Auth = streamAuth(cs)
	e.ECN = &ECNResult{Requested: cfg.ECN}
	ecnSending(cs, e.ECN)
	if rep.ECN != nil {
		e.ECN.ECTRecv, e.ECN.CERecv = rep.ECN.ECTRecv, rep.ECN.CERecv
	}
	validateECN(e.ECN)
	e.Bytes = min(rep.Bytes, s.ackedBytes)
	e.SenderBytes = s.sentBytes
	e.Seconds = elapsed.Seconds()
	if e.Seconds > 0 {
		e.ThroughputBps = float64(e.Bytes) * 8 / e.Seconds
	}
	applyOmit(cfg, e, ivs.omit, t0)
	e.Retransmits, e.Spurious, e.RTOs, e.RTOCauses = s.retransmits, s.spurious, s.rtos, s.rtoCauses
	e.MSS = s.mss
	e.MinRTTms = ms(s.minRTT)
	e.MeanSRTTms = ms(s.meanSRTT)
	match := rep.Mismatch == nil
	if e.Verification = VerifyPattern; rep.Verify == VerifyPattern {
		e.Mismatch = rep.Mismatch
	} else { // asked for digests, or a receiver that hashes regardless
		e.Verification = VerifySHA256
		e.SenderDigest = patternDigest(cfg.Seed, s.sentBytes)
		e.ReceiverDigest = rep.Digest
		match = e.SenderDigest == e.ReceiverDigest
	}
	e.Verified = match && rep.Bytes == s.sentBytes && s.ackedBytes >= s.sentBytes
	return nil
}

// runReverse: the receiver sends; we read to EOF, then fetch its report on
// a second connection.
func runReverse(ctx context.Context, ep *udp.Endpoint, peer netip.AddrPort, conn *udp.Conn, cfg *ClientConfig, res *Result) error {
	t0 := time.Now()
	ivs := startIntervals(cfg, t0, func() (int64, int64, int, time.Duration) {
		s := snapshot(conn.Stats())
		return s.recvBytes, 0, 0, 0
	}, &res.Intervals)
	buf := make([]byte, 256<<10)
	var first []byte // a refusal comes as a Report instead of pattern bytes
	var got int64
	var rerr error
	chk := newStreamCheck(cfg.Verify, cfg.Seed)
	for {
		n, err := conn.Read(buf)
		chk.write(buf[:n])
		if got < 512 && n > 0 {
			first = append(first, buf[:min(n, 512-int(got))]...)
		}
		got += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	elapsed := time.Since(t0)
	ivs.stop()
	if rerr != nil {
		return fmt.Errorf("transfer failed: %w", rerr)
	}
	if len(first) > 0 && first[0] == '{' && got < maxMessage {
		if rep, err := parseReport(first); err == nil && rep.Error != "" {
			return fmt.Errorf("receiver refused: %s", rep.Error)
		}
	}
	conn.CloseWrite()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Wait(wctx); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	cs := conn.Stats()
	s := snapshot(cs)

	// Fetch the sending side's report on a second connection.
	rq := Request{V: Version, Results: conn.ID()}
	tc := cfg.transportConfig(rq, nil)
	rc, err := ep.Dial(ctx, peer, tc)
	if err != nil {
		return fmt.Errorf("fetching the receiver's report: %w", err)
	}
	rc.CloseWrite()
	msg, err := readAll(rc, maxMessage)
	if err != nil {
		return fmt.Errorf("fetching the receiver's report: %w", err)
	}
	_ = rc.Wait(wctx)
	rep, err := parseReport(msg)
	if err != nil {
		return err
	}
	if rep.Error != "" {
		return fmt.Errorf("receiver: %s", rep.Error)
	}
	e := &res.End
	e.ECN = &ECNResult{Requested: cfg.ECN}
	if rep.ECN != nil {
		*e.ECN = *rep.ECN
		e.ECN.Requested = cfg.ECN
	} else {
		e.ECN.Codepoint = ecn.NotECT.String()
	}
	ecnReceiving(cs, e.ECN)
	validateECN(e.ECN)
	e.Auth = streamAuth(cs)
	e.Bytes = s.recvBytes
	e.SenderBytes = rep.Bytes
	e.MSS = s.mss
	e.Seconds = elapsed.Seconds()
	if e.Seconds > 0 {
		e.ThroughputBps = float64(e.Bytes) * 8 / e.Seconds
	}
	applyOmit(cfg, e, ivs.omit, t0)
	e.Retransmits, e.RTOs, e.RTOCauses = rep.Retransmits, rep.RTOs, rep.RTOCauses
	e.MinRTTms, e.MeanSRTTms = rep.MinRTTms, rep.MeanSRTTms
	if rep.CC != "" {
		e.CC, e.Recovery = rep.CC, rep.Recovery
	}
	e.Verification, e.Mismatch = chk.kind(), chk.mismatch()
	match := e.Mismatch == nil
	if rep.Verify != VerifyPattern { // a sender that reports a digest
		e.SenderDigest, e.ReceiverDigest = rep.Digest, chk.digest()
		if e.Verification == VerifyPattern && match {
			// What arrived is the pattern: its digest is the pattern's.
			e.ReceiverDigest = patternDigest(cfg.Seed, got)
		}
		e.Verification = VerifySHA256
		match = e.SenderDigest == e.ReceiverDigest
	}
	e.Verified = match && rep.Bytes == s.recvBytes
	return nil
}
