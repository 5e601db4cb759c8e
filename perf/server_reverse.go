package perf

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
	"cclab/transport"
	"cclab/transport/udp"
)

// Reverse flows (sender -R): the receiver checks the request against its
// caps and keys (auth.go), sends the pattern and keeps the report for the
// client to fetch on a second connection.

type pending struct {
	done    chan struct{} // closed when rep is final
	fetched chan struct{} // closed when the client fetched rep
	once    sync.Once
	peer    netip.Addr // the flow's client; only it may fetch the report
	rep     Report
	at      time.Time
}

// reportTTL is how long a reverse flow's report is kept for the client to fetch.
const reportTTL = 2 * time.Minute

// configure sets the sending side's parameters of a reverse flow from the
// client's request (called by the transport before the connection is built).
func (s *Server) configure(request []byte, cfg *transport.Config) {
	if s.cfg.QlogDir != "" {
		// Each connection gets its own sink; serve attaches the qlog file.
		cfg.Sink = &flowSink{}
	}
	// The receiver agrees to ECN whenever the client's Initial asks for it
	// (the transport negotiates it only then), in both directions: forward,
	// it echoes CE; reverse, it sends ECT(0) and reacts to ECN-Echo.
	cfg.ECN = true
	cfg.Digest = "none" // perf verifies with its own digests (digest.go)
	req, err := parseRequest(request)
	if err == nil && req.Test != "" && s.cfg.FlowKey != nil {
		// An admitted flow's data path is authenticated with its
		// admission key (authdata.go); nil: no such flow, Admit refuses it.
		cfg.PSK = s.cfg.FlowKey(req.Test)
	}
	if err != nil || !req.Reverse || !s.cfg.AllowReverse || s.checkReverse(req) != nil {
		// Nothing is sent before serve checked the request (and its MAC),
		// but a refused request does not even get its controller.
		return
	}
	if req.CC != "" {
		cfg.CC = req.CC
	}
	if req.Recovery != "" {
		cfg.Recovery = req.Recovery
	}
	if req.MinRTOms > 0 {
		cfg.MinRTO = time.Duration(req.MinRTOms * float64(time.Millisecond))
	}
}

// checkReverse checks a reverse request against the server's caps; the
// error names the cap's flag and the allowed values.
func (s *Server) checkReverse(req Request) error {
	c := &s.cfg
	maxS := c.MaxReverseDuration.Seconds()
	switch {
	case req.Bytes > c.MaxReverseBytes:
		return fmt.Errorf("requested %d bytes, this receiver sends at most %d (-max-reverse-bytes)", req.Bytes, c.MaxReverseBytes)
	case req.Bytes == 0 && req.Seconds > maxS:
		return fmt.Errorf("requested %gs, this receiver sends for at most %gs (-max-reverse-seconds)", req.Seconds, maxS)
	case req.MinRTOms != 0 && (req.MinRTOms < minReverseRTOms || req.MinRTOms > maxReverseRTOms):
		return fmt.Errorf("min_rto_ms %g: must be between %d and %d", req.MinRTOms, minReverseRTOms, maxReverseRTOms)
	}
	cc, rec := req.CC, req.Recovery
	if cc == "" {
		cc = transport.DefaultCC
	}
	if rec == "" {
		rec = transport.DefaultRecovery
	}
	if err := errors.Join(validateCC(cc), validateRecovery(rec)); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	name, params, _ := spec.Split(cc)
	if c.ReverseCC != nil && !slices.Contains(c.ReverseCC, name) {
		return fmt.Errorf("cc %q: this receiver sends reverse flows only with %s (-reverse-cc)", name, strings.Join(c.ReverseCC, ", "))
	}
	if len(params) > 0 && !c.ReverseCCParams {
		return fmt.Errorf("cc %q: this receiver does not take controller parameters from a request (-reverse-cc-params)", cc)
	}
	return nil
}

// serveHello answers a hello (auth.go) with a fresh server nonce and the
// server's proof of the key.
func (s *Server) serveHello(ctx context.Context, c *udp.Conn, req Request) {
	var rep Report
	cn, okNonce := decodeNonce(req.Hello)
	key, okKey := []byte(nil), false
	if s.cfg.Keys != nil {
		key, okKey = s.cfg.Keys.Key(req.Key)
	}
	switch {
	case !okNonce:
		s.count(func(st *ServerStats) { st.BadRequests++ })
		rep = Report{V: Version, Error: fmt.Sprintf("bad request: hello must be %d bytes in hex", nonceBytes)}
	case s.cfg.Keys == nil:
		s.count(func(st *ServerStats) { st.AuthFailed++ })
		rep = Report{V: Version, Error: "this receiver has no pre-shared key (receiver -psk-file): it cannot authenticate"}
	case !okKey:
		s.count(func(st *ServerStats) { st.AuthFailed++ })
		rep = Report{V: Version, Error: fmt.Sprintf("authentication failed: unknown key %q (not in this receiver's -psk-file)", req.Key)}
	default:
		s.count(func(st *ServerStats) { st.Challenges++ })
		sn := s.chal.issue(c.Peer().Addr(), time.Now())
		rep = Report{V: Version, Challenge: hex.EncodeToString(sn), Proof: hex.EncodeToString(authMAC(key, labelServer, cn, sn))}
	}
	if rep.Error != "" {
		s.logf("%016x from %v: refused: %s", c.ID(), c.Peer(), rep.Error)
	}
	_, _ = c.Write(mustJSON(rep))
	c.CloseWrite()
	s.drain(ctx, c)
}

// admitReverse decides whether a reverse request is served: -allow-reverse,
// then the key (or, without keys, a loopback client), the caps, and a free
// reverse-flow slot (taken on success; the caller gives it back). It returns
// the refusal message and the counter to bump, or "".
func (s *Server) admitReverse(c *udp.Conn, req Request) (string, func(*ServerStats)) {
	refused := func(st *ServerStats) { st.ReverseRefused++ }
	authFailed := func(st *ServerStats) { st.AuthFailed++ }
	badParams := func(st *ServerStats) { st.BadParameters++ }
	if !s.cfg.AllowReverse {
		return "reverse mode (-R) refused: this receiver was not started with -allow-reverse", refused
	}
	if s.cfg.Keys == nil {
		if req.Nonce != "" {
			return "reverse mode (-R) refused: this receiver has no pre-shared key (receiver -psk-file)", authFailed
		}
		if !c.Peer().Addr().Unmap().IsLoopback() {
			return "reverse mode (-R) refused: without a pre-shared key (receiver -psk-file) this receiver serves reverse flows only to loopback clients", refused
		}
	} else if msg := s.authenticate(c, req); msg != "" {
		s.logf("%016x from %v: refused unknown peer: %s", c.ID(), c.Peer(), msg)
		return "reverse mode (-R) refused: " + msg, authFailed
	}
	if err := s.checkReverse(req); err != nil {
		return "reverse mode (-R) refused: " + err.Error(), badParams
	}
	select {
	case s.revSlot <- struct{}{}:
	default:
		return fmt.Sprintf("reverse mode (-R) refused: %d reverse flows already running (-max-reverse-flows)", s.cfg.MaxReverseFlows), refused
	}
	return "", nil
}

// authTimeout bounds the wait for a client's MAC line.
const authTimeout = 10 * time.Second

// authenticate checks a reverse request against the server's keys: the
// nonce must be one this server handed to the client's address and not
// used yet, and the client's first stream line must carry the MAC of the
// nonce and the request. It returns "" when it checks out.
func (s *Server) authenticate(c *udp.Conn, req Request) string {
	if req.Nonce == "" {
		return "this receiver requires a pre-shared key for reverse mode (sender -psk-file)"
	}
	key, ok := s.cfg.Keys.Key(req.Key)
	if !ok {
		return fmt.Sprintf("authentication failed: unknown key %q (not in this receiver's -psk-file)", req.Key)
	}
	sn, ok := decodeNonce(req.Nonce)
	if !ok || !s.chal.take(sn, c.Peer().Addr(), time.Now()) {
		return "authentication failed: unknown, used or expired challenge"
	}
	// Read the MAC line; a client that does not send it within authTimeout
	// is cut off.
	timer := time.AfterFunc(authTimeout, func() { c.Do(func(now clock.Time, tc *transport.Conn) { tc.Abort(now) }) })
	line, err := readLine(c, maxAuthLine)
	timer.Stop()
	if err != nil {
		return "authentication failed: no MAC line from the client: " + err.Error()
	}
	var al authLine
	if json.Unmarshal(line, &al) != nil {
		return "authentication failed: malformed MAC line"
	}
	mac, herr := hex.DecodeString(al.MAC)
	if herr != nil || !hmac.Equal(mac, authMAC(key, labelReverse, sn, c.Request())) {
		return "authentication failed: wrong key"
	}
	return ""
}

// readLine reads c up to and including the first newline, at most max
// bytes. Reads go one byte at a time so nothing after the line is consumed.
func readLine(c *udp.Conn, max int) ([]byte, error) {
	var out []byte
	var b [1]byte
	for len(out) < max {
		n, err := c.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				return out, nil
			}
			out = append(out, b[0])
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("line longer than %d bytes", max)
}

// serveReverse sends the pattern as the client asked and keeps the report
// for the client to fetch.
func (s *Server) serveReverse(ctx context.Context, c *udp.Conn, req Request, sum *FlowSummary) *pending {
	p := &pending{done: make(chan struct{}), fetched: make(chan struct{}), peer: c.Peer().Addr().Unmap()}
	s.expireReports()
	s.mu.Lock()
	s.reports[c.ID()] = p
	s.mu.Unlock()
	defer func() {
		p.at = time.Now()
		close(p.done)
		s.expireReports()
	}()
	cc, rec := req.CC, req.Recovery
	if cc == "" {
		cc = transport.DefaultCC
	}
	if rec == "" {
		rec = transport.DefaultRecovery
	}
	sum.CC, sum.Recovery = cc, rec
	// The controller and recovery were set from the request by configure
	// when the connection was built (admitReverse checked them).
	length := req.Bytes
	if length == 0 {
		length = -1
	}
	t0 := time.Now()
	c.SetSource(transport.NewPatternSource(req.Seed), length)
	if req.Bytes == 0 {
		d := time.Duration(req.Seconds * float64(time.Second))
		if d <= 0 {
			d = min(10*time.Second, s.cfg.MaxReverseDuration)
		}
		timer := time.AfterFunc(d, c.CloseWrite)
		defer timer.Stop()
	}
	// Whatever was asked, the flow ends by the clock: a bytes request that
	// has not finished after -max-reverse-seconds (plus the time a duration
	// request may take to drain) is aborted.
	var overtime atomic.Bool
	limit := time.AfterFunc(s.cfg.MaxReverseDuration+reverseGrace, func() {
		overtime.Store(true)
		c.Do(func(now clock.Time, tc *transport.Conn) { tc.Abort(now) })
	})
	defer limit.Stop()
	im := s.startIntervals(FlowInterval{ConnID: sum.ConnID, Peer: sum.Peer, Reverse: true}, func() flowCounters {
		st := snapshot(c.Stats())
		return flowCounters{bytes: st.ackedBytes, retransmits: st.retransmits, cwnd: st.cwnd, srtt: st.srtt}
	})
	// The client sends nothing but its FIN.
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := c.Wait(wctx)
	sum.Intervals = im.finish()
	elapsed := time.Since(t0)
	cs := c.Stats()
	st := snapshot(cs)
	sum.Auth = streamAuth(cs)
	if cs.ECN {
		sum.ECN = &ECNResult{}
		ecnSending(cs, sum.ECN)
	}
	sum.Bytes = min(st.sentBytes, st.ackedBytes)
	sum.Seconds = elapsed.Seconds()
	if sum.Seconds > 0 {
		sum.ThroughputBps = float64(sum.Bytes) * 8 / sum.Seconds
	}
	if req.Verify == VerifyPattern {
		sum.Verify = VerifyPattern // the client compares what it reads with the pattern
	} else {
		sum.Digest = patternDigest(req.Seed, st.sentBytes)
	}
	sum.Retransmits, sum.RTOs = st.retransmits, st.rtos
	sum.MinRTTms = ms(st.minRTT)
	sum.MeanSRTTms = ms(st.meanSRTT)
	p.rep = Report{V: Version, Bytes: sum.Bytes, Digest: sum.Digest, Verify: sum.Verify, Seconds: sum.Seconds,
		Retransmits: sum.Retransmits, RTOs: sum.RTOs, MinRTTms: sum.MinRTTms, MeanSRTTms: sum.MeanSRTTms,
		CC: cc, Recovery: rec, RTOCauses: st.rtoCauses, ECN: sum.ECN}
	if overtime.Load() {
		err = fmt.Errorf("reverse flow aborted after %v (-max-reverse-seconds)", s.cfg.MaxReverseDuration+reverseGrace)
	}
	if err != nil {
		sum.Error = err.Error()
		p.rep.Error = "transfer failed at the receiver: " + err.Error()
	}
	return p
}

// reverseGrace is how long past -max-reverse-seconds a reverse flow may take
// to deliver what it sent before it is aborted.
const reverseGrace = 10 * time.Second

// serveReport answers a report fetch for an earlier reverse connection.
func (s *Server) serveReport(ctx context.Context, c *udp.Conn, id uint64) {
	s.mu.Lock()
	p := s.reports[id]
	s.mu.Unlock()
	var rep Report
	if p == nil || p.peer != c.Peer().Addr().Unmap() {
		rep = Report{V: Version, Error: fmt.Sprintf("no reverse flow %016x here", id)}
	} else {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		select {
		case <-p.done:
			rep = p.rep
			defer p.once.Do(func() { close(p.fetched) }) // after the report went out
		case <-wctx.Done():
			rep = Report{V: Version, Error: "reverse flow still running"}
		}
		cancel()
	}
	_, _ = c.Write(mustJSON(rep))
	c.CloseWrite()
	s.drain(ctx, c)
}

func (s *Server) expireReports() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest uint64
	var oldestAt time.Time
	for id, p := range s.reports {
		select {
		case <-p.done:
			if time.Since(p.at) > reportTTL {
				delete(s.reports, id)
			} else if oldestAt.IsZero() || p.at.Before(oldestAt) {
				oldest, oldestAt = id, p.at
			}
		default:
		}
	}
	// At most maxReports are kept: the oldest finished one goes first.
	if len(s.reports) >= maxReports && !oldestAt.IsZero() {
		delete(s.reports, oldest)
	}
}
