package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/internal/hostlimit"
	"cclab/transport"
	"cclab/transport/udp"
)

// Datagram mode (cmd/sender -mode datagram, docs/dccp.md): the client opens
// a transport.DgramConn whose Request is a perf Request with Mode
// "datagram" and sends stamped datagrams (transport.StampSource, Unix-time
// stamps) for Duration; the server reads them into a transport.DgramMeter.
// After closing, the client fetches the receiver's account (Report.Dgram)
// on a stream connection exactly as a reverse test fetches its report
// (Request.Results = the datagram connection's ID).

// ModeDatagram is Request.Mode of a datagram-mode test.
const ModeDatagram = "datagram"

// DgramClientConfig describes one datagram-mode test.
type DgramClientConfig struct {
	Addr       string        // receiver "host:port"
	Duration   time.Duration // how long to send (default 10 s)
	CC         string        // "ccid2" (default, e.g. "ccid2:ackratio=1"), "none", or a stream controller counted in packets
	Size       int           // max datagram (UDP payload), bytes (default 1200); datagrams fill it
	Rate       float64       // application rate, payload bits/s; 0: greedy (needs a controller)
	On, Off    time.Duration // ON/OFF generation (both or neither)
	SendQueue  int           // send queue limit, datagrams (0: transport default 64)
	DropPolicy string        // "newest" (default) or "oldest"
	ECN        bool          // send ECT(0); CE is reported in the Ack Vector
	Interval   time.Duration // sampling interval of the time series (default 100 ms)
	Timeout    time.Duration // handshake timeout (0: transport default)
	QlogDir    string        // write <dir>/<connid>-client.sqlog (sent, acked, lost, metrics events); "" none
	Endpoint   *udp.Endpoint // use this endpoint instead of opening a socket (may be nil)
	Driver     udp.Config    // socket driver options when Endpoint is nil
}

// Validate checks cfg and fills defaults.
func (c *DgramClientConfig) Validate() error {
	if c.Addr == "" {
		return errors.New("no receiver address (-c host:port)")
	}
	if c.CC == "" {
		c.CC = transport.DefaultDgramCC
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = 100 * time.Millisecond
	}
	if c.Duration < 0 || c.Interval < 0 {
		return fmt.Errorf("-t %v / -i %v: must be positive", c.Duration, c.Interval)
	}
	if c.Size != 0 && (c.Size < transport.MinDatagram || c.Size > MaxSize) {
		return fmt.Errorf("-size %d: must be between %d and %d bytes", c.Size, transport.MinDatagram, MaxSize)
	}
	if _, err := transport.ParseDropPolicy(c.DropPolicy); err != nil {
		return fmt.Errorf("-drop: %v", err)
	}
	tc, err := c.transportConfig()
	if err != nil {
		return err
	}
	if err := tc.Validate(); err != nil {
		names := append(ccalgo.DgramRegistry.Names(), transport.DgramCCNone)
		names = append(names, ccalgo.Registry.Names()...)
		return fmt.Errorf("%v (datagram controllers: %s)", err, strings.Join(names, ", "))
	}
	return nil
}

func (c *DgramClientConfig) transportConfig() (transport.DgramConfig, error) {
	pol, err := transport.ParseDropPolicy(c.DropPolicy)
	if err != nil {
		return transport.DgramConfig{}, err
	}
	tc := transport.DefaultDgramConfig()
	tc.CC, tc.Rate, tc.On, tc.Off, tc.ECN, tc.DropPolicy = c.CC, c.Rate, c.On, c.Off, c.ECN, pol
	if c.Size > 0 {
		tc.MaxDatagram = c.Size
	}
	if c.SendQueue > 0 {
		tc.SendQueue = c.SendQueue
	}
	if c.Timeout > 0 {
		tc.HandshakeTimeout = c.Timeout
	}
	tc.Request = Request{V: Version, Mode: ModeDatagram}.encode()
	return tc, nil
}

// DgramReport is the receiver's account of a datagram-mode flow.
type DgramReport struct {
	Datagrams     uint64  `json:"datagrams"`      // datagrams delivered to the application
	Bytes         uint64  `json:"bytes"`          // their payload bytes
	Seconds       float64 `json:"seconds"`        // first to last datagram
	ThroughputBps float64 `json:"throughput_bps"` // payload bits/s over Seconds
	LostNetwork   uint64  `json:"lost_network"`   // transport sequence numbers never received: lost in the network
	Missing       uint64  `json:"missing"`        // application sequence numbers never received: network loss plus the sender's queue drops
	RecvDropped   uint64  `json:"recv_dropped"`   // dropped by the full receive queue
	CEMarked      uint64  `json:"ce_marked"`      // data packets received CE-marked
	AcksSent      uint64  `json:"acks_sent"`      // acknowledgement packets sent
	OWDms         float64 `json:"owd_ms"`         // mean one-way delay (Unix-time stamps: same host or synchronized clocks)
	OWDMinms      float64 `json:"owd_min_ms"`
	OWDMaxms      float64 `json:"owd_max_ms"`
	Jitterms      float64 `json:"jitter_ms"` // RFC 3550 §6.4.1 interarrival jitter at the end
	PeerAckRatio  int     `json:"ack_ratio"` // the Ack Ratio the sender last asked for
}

// RatioPoint is one Ack Ratio change.
type RatioPoint struct {
	T     float64 `json:"t"`     // seconds since the start
	Ratio int     `json:"ratio"` // packets
}

// DgramInterval is one sample of the sender's time series.
type DgramInterval struct {
	Start       float64 `json:"start"` // seconds since the test started
	End         float64 `json:"end"`
	Sent        uint64  `json:"sent"`       // data packets sent in the interval
	SentBytes   uint64  `json:"sent_bytes"` // their payload bytes
	SendBps     float64 `json:"send_bps"`
	AckedBps    float64 `json:"acked_bps"` // payload of data packets acknowledged as received, bits/s
	Lost        uint64  `json:"lost"`      // data packets declared lost in the interval
	Dropped     uint64  `json:"queue_dropped"`
	CwndPackets int     `json:"cwnd_packets"`
	AckRatio    int     `json:"ack_ratio"`
	SRTTms      float64 `json:"srtt_ms"`
}

// DgramResult is the sender's JSON output (cmd/sender -mode datagram -J).
type DgramResult struct {
	Mode          string          `json:"mode"`
	ConnID        string          `json:"conn_id"`
	Timestamp     string          `json:"timestamp"`     // wall clock at start, RFC 3339
	Local         string          `json:"local"`         // our socket address
	Peer          string          `json:"connecting_to"` // the receiver's address
	MaxDatagram   int             `json:"max_datagram"`  // bytes
	Rate          float64         `json:"rate_bps"`      // application rate, payload bits/s (0: greedy)
	CC            string          `json:"cc"`
	Seconds       float64         `json:"seconds"`
	Generated     uint64          `json:"generated"`     // datagrams the application produced
	Sent          uint64          `json:"sent"`          // data packets sent
	SentBytes     uint64          `json:"sent_bytes"`    // payload bytes sent
	SendRateBps   float64         `json:"send_rate_bps"` // payload bits/s sent
	QueueDropped  uint64          `json:"queue_dropped"` // dropped at the sender's queue
	Acked         uint64          `json:"acked"`         // acknowledged as received (Ack Vectors)
	AckedECN      uint64          `json:"acked_ecn"`
	LostDeclared  uint64          `json:"lost_declared"` // declared lost (three later packets acknowledged) or given up at an RTO
	Congestion    uint64          `json:"congestion_events"`
	RTOs          uint64          `json:"rtos"`
	AckLoss       uint64          `json:"ack_loss"` // acknowledgement packets lost on the way back
	MinRTTms      float64         `json:"min_rtt_ms"`
	SRTTms        float64         `json:"srtt_ms"`
	AckRatio      []RatioPoint    `json:"ack_ratio"` // Ack Ratio over time (changes)
	Intervals     []DgramInterval `json:"intervals"`
	Receiver      *DgramReport    `json:"receiver,omitempty"` // the receiver's account
	ReceiverError string          `json:"receiver_error,omitempty"`
	// Host is what limited the sending process besides the network
	// (docs/metrics.md, "Host-limited runs").
	Host *hostlimit.Report `json:"host_limit,omitempty"`
}

// RunDgram runs one datagram-mode test.
func RunDgram(ctx context.Context, cfg DgramClientConfig) (*DgramResult, error) {
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
	tc, _ := cfg.transportConfig()
	var sink *flowSink
	if cfg.QlogDir != "" {
		sink = &flowSink{}
		tc.Sink = sink // the qlog file is attached once the connection ID is known
	}
	conn, err := ep.DialDgram(ctx, peer, tc)
	if err != nil {
		return nil, err
	}
	if sink != nil {
		ql, err := openQlog(cfg.QlogDir, conn.ID(), "client", &ClientConfig{Addr: cfg.Addr, CC: cfg.CC}, ep.Now())
		if err != nil {
			conn.Abort()
			return nil, err
		}
		conn.Do(func(clock.Time, *transport.DgramConn) { sink.ql = ql })
		defer func() {
			conn.Do(func(clock.Time, *transport.DgramConn) { sink.ql = nil })
			ql.Close()
		}()
	}
	hw := watchHost(ep)
	t0 := time.Now()
	res := &DgramResult{Mode: ModeDatagram, ConnID: fmt.Sprintf("%016x", conn.ID()), CC: cfg.CC,
		Timestamp: t0.UTC().Format(time.RFC3339Nano), Local: ep.LocalAddr().String(), Peer: peer.String(),
		MaxDatagram: tc.MaxDatagram, Rate: cfg.Rate}
	c0 := ep.Now()
	offset := t0.UnixNano() - int64(c0)
	conn.Do(func(now clock.Time, c *transport.DgramConn) { c.SetSource(now, &transport.StampSource{Offset: offset}) })
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	end := time.NewTimer(cfg.Duration)
	defer end.Stop()
	prev, prevT := conn.Stats(), 0.0
	sample := func() {
		s := conn.Stats()
		t := time.Since(t0).Seconds()
		dt := t - prevT
		if dt <= 0 {
			return
		}
		res.Intervals = append(res.Intervals, DgramInterval{Start: prevT, End: t,
			Sent: s.DataSent - prev.DataSent, SentBytes: s.BytesSent - prev.BytesSent,
			SendBps:  float64(s.BytesSent-prev.BytesSent) * 8 / dt,
			AckedBps: float64(s.Acked-prev.Acked) * float64(s.BytesSent) / float64(max(s.DataSent, 1)) * 8 / dt,
			Lost:     s.Lost + s.LostRTO - prev.Lost - prev.LostRTO, Dropped: s.QueueDropped - prev.QueueDropped,
			CwndPackets: s.CwndPackets, AckRatio: s.AckRatio, SRTTms: ms(s.SRTT)})
		prev, prevT = s, t
	}
	var runErr error
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-end.C:
			break loop
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		}
	}
	sample()
	elapsed := time.Since(t0)
	var log []transport.RatioChange
	conn.Do(func(now clock.Time, c *transport.DgramConn) {
		log = append(log, c.AckRatioLog()...)
		c.SetSource(now, nil)
	})
	for _, r := range log {
		res.AckRatio = append(res.AckRatio, RatioPoint{T: r.At.Sub(c0).Seconds(), Ratio: r.Ratio})
	}
	if runErr != nil {
		conn.Abort()
		return res, runErr
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Close(cctx); err != nil {
		return res, fmt.Errorf("closing: %w", err)
	}
	s := conn.Stats()
	res.Seconds = elapsed.Seconds()
	res.Generated, res.Sent, res.SentBytes, res.QueueDropped = s.Generated, s.DataSent, s.BytesSent, s.QueueDropped
	res.SendRateBps = float64(s.BytesSent) * 8 / res.Seconds
	res.Acked, res.AckedECN, res.LostDeclared = s.Acked, s.AckedECN, s.Lost+s.LostRTO
	res.Congestion, res.RTOs, res.AckLoss = s.Congestion, s.RTOs, s.AckLoss
	res.MinRTTms, res.SRTTms = ms(s.MinRTT), ms(s.SRTT)
	res.Host = hw.report(RoleSender, func(r *hostlimit.Report) {
		r.Generated, r.QueueDropped = s.Generated, s.QueueDropped
		r.Uncontrolled = cfg.CC == transport.DgramCCNone
	})

	// The receiver's account, fetched as a reverse test fetches its report.
	rq := Request{V: Version, Results: conn.ID()}
	stc := transport.DefaultConfig()
	stc.Request = rq.encode()
	rc, err := ep.Dial(ctx, peer, stc)
	if err != nil {
		res.ReceiverError = err.Error()
		return res, nil
	}
	rc.CloseWrite()
	msg, err := readAll(rc, maxMessage)
	_ = rc.Wait(cctx)
	if err != nil {
		res.ReceiverError = err.Error()
		return res, nil
	}
	rep, err := parseReport(msg)
	switch {
	case err != nil:
		res.ReceiverError = err.Error()
	case rep.Error != "":
		res.ReceiverError = rep.Error
	default:
		res.Receiver = rep.Dgram
	}
	return res, nil
}

// dgramEndpointConfig is the server's datagram-mode configuration: it
// accepts any datagram size up to MaxSize and agrees to ECN when asked.
func dgramEndpointConfig() transport.DgramEndpointConfig {
	d := transport.DefaultDgramConfig()
	d.MaxDatagram = MaxSize
	d.ECN = true
	d.RecvQueue = 4096
	return transport.DgramEndpointConfig{Defaults: d}
}

// startDgrams accepts datagram-mode flows alongside Serve's stream
// connections (one port serves both modes).
func (s *Server) startDgrams(ctx context.Context, cancel context.CancelFunc) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := s.ep.AcceptDgram(ctx)
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				p := s.serveDgram(ctx, c)
				if s.cfg.Once && p != nil {
					select {
					case <-p.fetched:
					case <-time.After(30 * time.Second):
					case <-ctx.Done():
					}
					cancel()
				}
			}()
		}
	}()
}

// serveDgram reads one datagram-mode flow into a meter until it ends and
// leaves its report for the client to fetch.
func (s *Server) serveDgram(ctx context.Context, c *udp.DgramConn) *pending {
	id := c.ID()
	sum := FlowSummary{ConnID: fmt.Sprintf("%016x", id), Peer: c.Peer().String(), Mode: ModeDatagram}
	req, err := parseRequest(c.Request())
	if err != nil || req.Mode != ModeDatagram {
		s.count(func(st *ServerStats) { st.BadRequests++ })
		c.Abort()
		if err == nil {
			err = fmt.Errorf("%w: datagram connection without mode %q", ErrBadRequest, ModeDatagram)
		}
		sum.Error = err.Error()
		s.finish(sum)
		return nil
	}
	if s.cfg.Admit != nil {
		if _, err := s.cfg.Admit(Admission{ConnID: id, InitialDCID: c.InitialDCID(), Peer: c.Peer(), Test: req.Test, MAC: req.MAC}); err != nil {
			s.count(func(st *ServerStats) { st.NotAdmitted++ })
			c.Abort()
			sum.Error = err.Error()
			s.finish(sum)
			return nil
		}
	}
	p := &pending{done: make(chan struct{}), fetched: make(chan struct{}), peer: c.Peer().Addr().Unmap()}
	s.expireReports()
	s.mu.Lock()
	s.reports[id] = p
	s.mu.Unlock()
	s.logf("%016x from %v: datagram flow", id, c.Peer())
	offset := time.Now().UnixNano() - int64(s.ep.Now())
	hw := watchHost(s.ep)
	m := transport.DgramMeter{Offset: offset}
	buf := make([]byte, MaxSize)
	var first, last clock.Time
	var rerr error
	for {
		n, at, err := c.Recv(ctx, buf)
		if err != nil {
			if err != io.EOF {
				rerr = err
			}
			break
		}
		if m.Received == 0 {
			first = at
		}
		last = at
		_ = m.Add(at, buf[:n])
	}
	st := c.Stats()
	r := &DgramReport{Datagrams: m.Received, Bytes: m.Bytes, LostNetwork: st.RecvLost, Missing: m.Missing,
		RecvDropped: st.RecvDropped, CEMarked: st.RecvCE, AcksSent: st.AcksSent, OWDms: ms(m.MeanDelay()),
		OWDMinms: ms(m.DelayMin), OWDMaxms: ms(m.DelayMax), Jitterms: ms(m.Jitter), PeerAckRatio: st.PeerAckRatio}
	if m.Received > 1 {
		r.Seconds = last.Sub(first).Seconds()
		if r.Seconds > 0 {
			r.ThroughputBps = float64(m.Bytes) * 8 / r.Seconds
		}
	}
	sum.Bytes, sum.Seconds, sum.ThroughputBps, sum.Dgram = int64(m.Bytes), r.Seconds, r.ThroughputBps, r
	sum.Host = hw.report(RoleReceiver, func(h *hostlimit.Report) { h.RecvDropped += st.RecvDropped })
	p.rep = Report{V: Version, Bytes: int64(m.Bytes), Seconds: r.Seconds, Dgram: r}
	if rerr != nil {
		sum.Error = rerr.Error()
		p.rep.Error = "datagram flow failed at the receiver: " + rerr.Error()
	}
	p.at = time.Now()
	close(p.done)
	s.finish(sum)
	s.expireReports()
	return p
}
