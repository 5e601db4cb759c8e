package perf

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
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
	Addr      string        // receiver "host:port"
	Duration  time.Duration // how long to send (default 10 s)
	CC        string        // "ccid2" (default, e.g. "ccid2:ackratio=1"), "none", or a stream controller counted in packets
	Size      int           // max datagram (UDP payload), bytes (default 1200); datagrams fill it
	Rate      float64       // application rate, payload bits/s; 0: greedy (needs a controller)
	On, Off   time.Duration // ON/OFF generation (both or neither)
	SendQueue int           // send queue limit, datagrams (0: transport default 64)
	// PacingQuantum is transport.DgramConfig.PacingQuantum: datagrams due
	// within it are released at one wake-up and sent in one batch (0: one
	// wake-up per datagram; cmd/sender's -pacing-quantum defaults to
	// transport.DefaultLivePacingQuantum).
	PacingQuantum time.Duration
	DropPolicy    string        // "newest" (default) or "oldest"
	ECN           bool          // send ECT(0); CE is reported in the Ack Vector
	Interval      time.Duration // sampling interval of the time series (default 100 ms)
	Timeout       time.Duration // handshake timeout (0: transport default)
	QlogDir       string        // write <dir>/<connid>-client.sqlog (sent, acked, lost, metrics events); "" none
	Endpoint      *udp.Endpoint // use this endpoint instead of opening a socket (may be nil)
	Driver        udp.Config    // socket driver options when Endpoint is nil
	Keys          *Keys         // -psk-file: authenticate the flow with the first key (may be nil)
	Encrypt       bool          // -psk-encrypt: with Keys, encrypt the packets too
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
	if c.PacingQuantum < 0 || c.PacingQuantum > transport.MaxPacingQuantum {
		return fmt.Errorf("-pacing-quantum %v: must be 0..%v", c.PacingQuantum, transport.MaxPacingQuantum)
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
	tc.PacingQuantum = c.PacingQuantum
	tc.Request = Request{V: Version, Mode: ModeDatagram}.encode()
	tc.PSK, tc.PSKName = pskFor(c.Keys)
	tc.Encrypt = c.Encrypt
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
	MaxDatagram   int             `json:"max_datagram"`  // bytes at the handshake (PLPMTU: the size discovered)
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
	Auth          *AuthResult     `json:"auth,omitempty"` // this end's account of an authenticated flow (authdata.go)
	// PLPMTU is the datagram size discovery's outcome (without -size, on a
	// route whose MTU is known: docs/transport.md "Datagram size
	// discovery"); nil when the size was fixed.
	PLPMTU *PLPMTUResult `json:"plpmtu,omitempty"`
	// Host is what limited the sending process besides the network
	// (docs/metrics.md, "Host-limited runs").
	Host *hostlimit.Report `json:"host_limit,omitempty"`
}

// PLPMTUResult is a flow's datagram size discovery (transport.PLPMTUStats).
type PLPMTUResult struct {
	Size       int    `json:"size"`        // datagram size in use at the end, bytes of UDP payload
	State      string `json:"state"`       // RFC 8899 §5.2 state at the end
	Probes     uint64 `json:"probes"`      // size probes sent
	ProbesLost uint64 `json:"probes_lost"` // sizes given up after MAX_PROBES unacknowledged probes
	BlackHoles uint64 `json:"black_holes"` // black holes detected (fell back to the base size)
}

// RunDgram runs one datagram-mode test: it dials, sends for
// cfg.Duration sampling the time series, closes, and fetches the
// receiver's account.
func RunDgram(ctx context.Context, cfg DgramClientConfig) (*DgramResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	driver := cfg.Driver
	if driver.TimerSlack == 0 {
		driver.TimerSlack = cfg.PacingQuantum // a burst at a time: no precise sleeps
	}
	driver.OneGoroutine = true // one wake-up per burst or ACK batch, not a goroutine hand-off each
	peer, ep, owned, err := dialEndpoint(cfg.Addr, cfg.Endpoint, driver)
	if err != nil {
		return nil, err
	}
	if owned {
		defer ep.Close()
	}
	tc, _ := cfg.transportConfig()
	if pathMax := ep.PathMaxPayload(); cfg.Size == 0 && pathMax > tc.MaxDatagram {
		tc.PLPMTUMax = pathMax // datagram size discovery (RFC 8899) up to the route's size
	}
	conn, closeQlog, err := dialDgram(ctx, ep, peer, tc, cfg)
	if err != nil {
		return nil, err
	}
	defer closeQlog()
	hw := watchHost(ep)
	res := &DgramResult{Mode: ModeDatagram, ConnID: fmt.Sprintf("%016x", conn.ID()), CC: cfg.CC,
		Local: ep.LocalAddr().String(), Peer: peer.String(), MaxDatagram: tc.MaxDatagram, Rate: cfg.Rate}
	elapsed, runErr := sendDgrams(ctx, ep, conn, cfg, res)
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
	res.Auth = dgramAuth(s)
	if p := s.PLPMTU; p.State != "" {
		res.PLPMTU = &PLPMTUResult{Size: p.Size, State: p.State, Probes: p.Probes, ProbesLost: p.ProbesLost, BlackHoles: p.BlackHoles}
	}
	res.Host = hw.report(RoleSender, func(r *hostlimit.Report) {
		r.Generated, r.QueueDropped = s.Generated, s.QueueDropped
		r.Uncontrolled = cfg.CC == transport.DgramCCNone
		r.MinRTT = s.MinRTT
	})
	fetchDgramReport(ctx, cctx, ep, peer, conn.ID(), cfg.Keys, res)
	return res, nil
}

// dialDgram opens the datagram connection and, with cfg.QlogDir, its qlog
// file (attached once the connection ID is known); closeQlog detaches and
// closes it.
func dialDgram(ctx context.Context, ep *udp.Endpoint, peer netip.AddrPort, tc transport.DgramConfig, cfg DgramClientConfig) (conn *udp.DgramConn, closeQlog func(), err error) {
	var sink *flowSink
	if cfg.QlogDir != "" {
		sink = &flowSink{}
		tc.Sink = sink
	}
	conn, err = ep.DialDgram(ctx, peer, tc)
	if err != nil {
		return nil, nil, authHint(err)
	}
	if sink == nil {
		return conn, func() {}, nil
	}
	ql, err := openQlog(cfg.QlogDir, conn.ID(), "client", &ClientConfig{Addr: cfg.Addr, CC: cfg.CC}, ep.Now())
	if err != nil {
		conn.Abort()
		return nil, nil, err
	}
	conn.Do(func(clock.Time, *transport.DgramConn) { sink.ql = ql })
	return conn, func() {
		conn.Do(func(now clock.Time, dc *transport.DgramConn) { sink.ql = nil; qlogAuth(ql, now, dgramAuth(dc.Stats())) })
		ql.Close()
	}, nil
}

// sendDgrams sends stamped datagrams for cfg.Duration (or until ctx ends),
// sampling res.Intervals every cfg.Interval, then stops the source and
// records the Ack Ratio's changes; it returns the time spent sending and
// ctx's error if it ended first.
func sendDgrams(ctx context.Context, ep *udp.Endpoint, conn *udp.DgramConn, cfg DgramClientConfig, res *DgramResult) (time.Duration, error) {
	t0 := time.Now()
	res.Timestamp = t0.UTC().Format(time.RFC3339Nano)
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
		if t-prevT <= 0 {
			return
		}
		res.Intervals = append(res.Intervals, dgramInterval(prev, s, prevT, t))
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
	return elapsed, runErr
}

// dgramInterval is the sender's sample of [t0, t1) s from the connection's
// statistics at its start (prev) and end (s).
func dgramInterval(prev, s transport.DgramStats, t0, t1 float64) DgramInterval {
	dt := t1 - t0
	return DgramInterval{Start: t0, End: t1,
		Sent: s.DataSent - prev.DataSent, SentBytes: s.BytesSent - prev.BytesSent,
		SendBps:  float64(s.BytesSent-prev.BytesSent) * 8 / dt,
		AckedBps: float64(s.Acked-prev.Acked) * float64(s.BytesSent) / float64(max(s.DataSent, 1)) * 8 / dt,
		Lost:     s.Lost + s.LostRTO - prev.Lost - prev.LostRTO, Dropped: s.QueueDropped - prev.QueueDropped,
		CwndPackets: s.CwndPackets, AckRatio: s.AckRatio, SRTTms: ms(s.SRTT)}
}

// fetchDgramReport fetches the receiver's account of datagram connection
// id, as a reverse test fetches its report, into res.Receiver (or
// res.ReceiverError); cctx bounds the closing handshake. keys
// authenticates the connection (-psk-file; may be nil).
func fetchDgramReport(ctx, cctx context.Context, ep *udp.Endpoint, peer netip.AddrPort, id uint64, keys *Keys, res *DgramResult) {
	stc := transport.DefaultConfig()
	stc.PSK, stc.PSKName = pskFor(keys)
	stc.Request = Request{V: Version, Results: id}.encode()
	rc, err := ep.Dial(ctx, peer, stc)
	if err != nil {
		res.ReceiverError = err.Error()
		return
	}
	rc.CloseWrite()
	msg, err := readAll(rc, maxMessage)
	_ = rc.Wait(cctx)
	if err != nil {
		res.ReceiverError = err.Error()
		return
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
}
