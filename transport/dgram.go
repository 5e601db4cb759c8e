package transport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/traffic"
)

// The unreliable datagram mode (docs/dccp.md): DCCP (RFC 4340)
// semantics over cclab's handshake. Every packet has its own sequence
// number, nothing is retransmitted, the receiver reports its receive state
// in Ack Vectors, acknowledges every Ack Ratio data packets, and trims its
// state when the sender acknowledges its acknowledgements; the sender's
// controller (CCID2 by default, RFC 4341) limits the packets in flight.

// Defaults of DgramConfig.
const (
	// DefaultDgramCC is the datagram mode's default controller.
	DefaultDgramCC = "ccid2"
	// DgramCCNone is the controller name for an uncontrolled flow: no
	// window, sending at the application's Rate.
	DgramCCNone = "none"
	// DefaultSendQueue is the application send queue limit, datagrams.
	DefaultSendQueue = 64
	// DefaultRecvQueue is the receive queue limit, datagrams.
	DefaultRecvQueue = 1024
	// DefaultDgramAckDelay bounds how long a receiver holds back an
	// acknowledgement waiting for Ack Ratio data packets (like TCP's
	// delayed-ACK timer, RFC 5681 §4.2).
	DefaultDgramAckDelay = 40 * time.Millisecond
	// dgramCloseTries is how many times a CLOSE is sent (RTO apart) before
	// the connection ends without a RESET (RFC 4340 §8.3 leaves the count to
	// the implementation).
	dgramCloseTries = 4
	// ratioLogMax bounds the Ack Ratio change log, entries.
	ratioLogMax = 4096
	// DefaultLivePacingQuantum is the PacingQuantum live senders use
	// (cmd/sender -pacing-quantum): iperf3's default pacing timer, 1 ms
	// (iperf3(1), --pacing-timer: "default 1000 microseconds").
	DefaultLivePacingQuantum = time.Millisecond
	// MaxPacingQuantum bounds PacingQuantum, a project choice (no standard
	// fixes one): ten times iperf3's default pacing timer, so a burst stays
	// at most 10 ms of the rate (at 100 Mbit/s, 125 kB) and well below a
	// bottleneck queue of 100 ms.
	MaxPacingQuantum = 10 * time.Millisecond
)

// DropPolicy says which datagram a full send queue discards.
type DropPolicy uint8

// Drop policies.
const (
	DropNewest DropPolicy = iota // the datagram being queued (default)
	DropOldest                   // the oldest queued datagram (freshest data wins, as media wants)
)

// String returns "newest" or "oldest".
func (d DropPolicy) String() string {
	if d == DropOldest {
		return "oldest"
	}
	return "newest"
}

// ParseDropPolicy parses "newest" or "oldest".
func ParseDropPolicy(s string) (DropPolicy, error) {
	switch s {
	case "newest", "":
		return DropNewest, nil
	case "oldest":
		return DropOldest, nil
	}
	return 0, fmt.Errorf("transport: drop policy %q: want newest or oldest", s)
}

// DgramSource produces application datagrams on demand (the datagram
// analogue of Source). Next writes one datagram into b (len(b) is the
// largest payload that fits a packet) and returns its length; it returns -1
// when it has nothing to send now.
type DgramSource interface {
	Next(now clock.Time, b []byte) int
}

// DgramConfig configures one datagram-mode connection. Zero fields take the
// defaults (DefaultDgramConfig).
type DgramConfig struct {
	MaxDatagram int           // largest UDP payload sent and accepted, bytes (default 1200)
	CC          string        // "ccid2" (default, "ccid2:ackratio=1,adapt=false"), "none", or a stream controller counted in packets
	AckRatio    int           // Ack Ratio when the controller has none (reno, none), packets (default 2)
	AckDelay    time.Duration // receiver: longest wait for Ack Ratio data packets before acknowledging (default 40 ms)
	MinRTO      time.Duration // RTO lower bound (default 200 ms)
	InitialRTO  time.Duration // RTO before the first sample (default 1 s)
	MaxRTO      time.Duration // RTO upper bound (default 60 s)
	ECN         bool          // negotiate ECN: data sent ECT(0), CE reported in the Ack Vector

	// Rate is the application's sending rate, payload bits/s: with a
	// Source, one datagram is generated every len*8/Rate into the send
	// queue (dropped there when the controller cannot keep up). 0 with a
	// Source: greedy (the source is asked whenever the window opens).
	Rate float64
	// On and Off make the generator alternate On of sending and Off of
	// silence (both > 0; zero: always on).
	On, Off time.Duration
	// PacingQuantum is how far ahead of its scheduled instant a datagram
	// may be released (0, the default: not at all, one wake-up per paced
	// datagram). The rate-driven generator and the controller's pacing
	// schedule then release, at one wake-up, every datagram due before
	// now+PacingQuantum, and the driver sends them in one batch. The
	// schedule itself is not moved: the long-run rate stays exactly Rate
	// (the pacing rate), and a burst is at most PacingQuantum·rate bytes
	// plus one datagram, a token bucket of that depth (see
	// MaxPacingQuantum). iperf3 -u paces with a 1 ms timer by default
	// (--pacing-timer 1000 µs); live senders use DefaultLivePacingQuantum.
	PacingQuantum time.Duration
	SendQueue     int        // send queue limit, datagrams (default 64)
	DropPolicy    DropPolicy // which datagram a full send queue drops
	RecvQueue     int        // receive queue limit, datagrams (default 1024) of the handshake's size (counted in bytes: fewer larger ones, dgram_queue.go); beyond it arrivals are dropped and counted
	// PLPMTUMax turns datagram size discovery on (DPLPMTUD, RFC 8899;
	// dgram_pmtu.go): the connection starts at the handshake's size and
	// probes up to PLPMTUMax bytes of UDP payload (MAX_PLPMTU). 0 (the
	// default): the size stays MaxDatagram.
	PLPMTUMax int

	Request          []byte        // client: opaque application request carried in the Initial
	PSK              []byte        // authenticates the connection (as Config.PSK)
	PSKName          string        // client: the key's name (as Config.PSKName)
	Encrypt          bool          // client, with PSK: encrypt the packets too (as Config.Encrypt)
	IdleTimeout      time.Duration // default 2 min
	HandshakeTimeout time.Duration // default 10 s
	Sink             event.Sink    // events of this connection; nil: the endpoint's Sink
}

// DefaultDgramConfig returns the package defaults.
func DefaultDgramConfig() DgramConfig {
	return DgramConfig{MaxDatagram: DefaultMaxDatagram, CC: DefaultDgramCC, AckRatio: ccalgo.CCID2DefaultAckRatio,
		AckDelay: DefaultDgramAckDelay, MinRTO: DefaultMinRTO, InitialRTO: DefaultInitialRTO, MaxRTO: DefaultMaxRTO,
		SendQueue: DefaultSendQueue, RecvQueue: DefaultRecvQueue,
		IdleTimeout: DefaultIdleTimeout, HandshakeTimeout: DefaultHandshakeTimeout}
}

func (c *DgramConfig) fill(d DgramConfig) {
	fillZero(&c.MaxDatagram, d.MaxDatagram)
	fillZero(&c.CC, d.CC)
	fillZero(&c.AckRatio, d.AckRatio)
	fillZero(&c.AckDelay, d.AckDelay)
	fillZero(&c.MinRTO, d.MinRTO)
	fillZero(&c.InitialRTO, d.InitialRTO)
	fillZero(&c.MaxRTO, d.MaxRTO)
	fillZero(&c.ECN, d.ECN)
	fillZero(&c.Rate, d.Rate)
	if c.On == 0 && c.Off == 0 {
		c.On, c.Off = d.On, d.Off
	}
	fillZero(&c.SendQueue, d.SendQueue)
	fillZero(&c.DropPolicy, d.DropPolicy) // DropNewest is the zero value
	fillZero(&c.RecvQueue, d.RecvQueue)
	fillZero(&c.PLPMTUMax, d.PLPMTUMax)
	fillZero(&c.IdleTimeout, d.IdleTimeout)
	fillZero(&c.HandshakeTimeout, d.HandshakeTimeout)
	fillZero(&c.Sink, d.Sink)
}

// Validate checks c after defaults are filled.
func (c *DgramConfig) Validate() error {
	switch {
	case c.MaxDatagram < MinDatagram || c.MaxDatagram > MaxUDPPayload:
		return fmt.Errorf("transport: MaxDatagram=%d: must be %d..%d bytes", c.MaxDatagram, MinDatagram, MaxUDPPayload)
	case c.MinRTO <= 0 || c.MaxRTO < c.MinRTO || c.InitialRTO <= 0:
		return fmt.Errorf("transport: MinRTO=%v InitialRTO=%v MaxRTO=%v: need 0 < MinRTO <= MaxRTO, InitialRTO > 0", c.MinRTO, c.InitialRTO, c.MaxRTO)
	case c.AckRatio < 1 || c.AckRatio > MaxAckRatio:
		return fmt.Errorf("transport: AckRatio=%d: must be 1..%d packets", c.AckRatio, MaxAckRatio)
	case c.AckDelay < 0:
		return fmt.Errorf("transport: AckDelay=%v: must be >= 0", c.AckDelay)
	case c.Rate < 0 || (c.On > 0) != (c.Off > 0) || c.On < 0 || c.Off < 0:
		return fmt.Errorf("transport: Rate=%v On=%v Off=%v: need Rate >= 0 and On, Off both > 0 or both 0", c.Rate, c.On, c.Off)
	case c.PacingQuantum < 0 || c.PacingQuantum > MaxPacingQuantum:
		return fmt.Errorf("transport: PacingQuantum=%v: must be 0..%v", c.PacingQuantum, MaxPacingQuantum)
	case c.SendQueue < 1 || c.RecvQueue < 1:
		return fmt.Errorf("transport: SendQueue=%d RecvQueue=%d: must be >= 1 datagrams", c.SendQueue, c.RecvQueue)
	case len(c.Request) > MaxRequest:
		return fmt.Errorf("transport: Request is %d bytes, at most %d", len(c.Request), MaxRequest)
	case CheckPLPMTUMax(c.PLPMTUMax, c.MaxDatagram) != nil:
		return fmt.Errorf("transport: PLPMTUMax=%d: %v", c.PLPMTUMax, CheckPLPMTUMax(c.PLPMTUMax, c.MaxDatagram))
	case c.CC == DgramCCNone && c.Rate == 0:
		return errors.New("transport: CC=none needs a Rate (an uncontrolled flow sends at a fixed rate)")
	}
	if err := checkPSK(c.PSK, c.PSKName); err != nil {
		return err
	}
	if c.CC == DgramCCNone {
		return nil
	}
	_, err := ccalgo.NewDgram(c.CC, ccalgo.Env{MSS: c.MaxDatagram - maxDgramOverhead})
	return err
}

// DgramStats is a snapshot of a datagram connection's counters.
type DgramStats struct {
	Start, Established, Finished clock.Time

	// Sending.
	Generated     uint64  // datagrams produced by the Source or Send
	QueueDropped  uint64  // datagrams dropped by the full send queue (DropPolicy)
	DataSent      uint64  // data packets sent
	BytesSent     uint64  // payload bytes sent
	PacketsSent   uint64  // all packets sent after the handshake (data, ACK, ping, close)
	Acked         uint64  // data packets acknowledged as received (ECN-marked included)
	AckedECN      uint64  // data packets acknowledged as received ECN-marked
	Lost          uint64  // data packets declared lost (three later packets acknowledged)
	LostRTO       uint64  // data packets given up at a timeout
	LateAcked     uint64  // packets acknowledged after being declared lost
	Untracked     uint64  // packets forgotten because the sent-packet ring overflowed
	Congestion    uint64  // congestion events passed to the controller (loss or CE, at most one per window)
	RTOs          uint64  // timeouts (handshake included)
	AcksReceived  uint64  // packets with an ACK section received
	AckLoss       uint64  // ACK-carrying packets of the peer missing from its sequence (ack congestion)
	AckRatio      int     // Ack Ratio currently sent to the peer, packets
	InFlight      int     // data packets in flight
	CwndPackets   int     // congestion window, packets (0 for none)
	PeerAckRatio  int     // Ack Ratio the peer asked us to use, packets
	RecvDelivered uint64  // datagrams put in the receive queue
	RecvRead      uint64  // datagrams read by the application
	RecvDropped   uint64  // datagrams dropped because the receive queue was full
	RecvBytes     uint64  // payload bytes received (queued)
	RecvDup       uint64  // duplicate or too-late packets
	RecvCE        uint64  // data packets received CE-marked
	RecvLost      uint64  // peer packets missing from its sequence so far (gaps not filled by reordering): loss in the network
	AcksSent      uint64  // packets with an ACK section sent
	Authenticated bool    // the connection is authenticated (a pre-shared key: auth.go)
	Encrypted     bool    // its packets are encrypted too (DgramConfig.Encrypt)
	AuthFailed    uint64  // packets dropped because authentication failed (forged or corrupt)
	Replayed      uint64  // packets dropped as replays (seen before, or older than the replay window)
	VecForgot     uint64  // receive state dropped because the Ack Vector span exceeded its bound
	VecSpan       int     // packets of receive state kept now
	LossEvents    uint64  // TFRC receiver: loss events detected (RFC 5348 §5.2; 0 without a TFRC peer)
	LossEventRate float64 // TFRC receiver: the loss event rate p last computed (RFC 5348 §5.4)

	SRTT, MinRTT, LastRTT, RTO time.Duration
	RTTSamples                 int

	PLPMTU PLPMTUStats // datagram size discovery (dgram_pmtu.go)
}

// RatioChange is one entry of the Ack Ratio log: the ratio in force from At.
type RatioChange struct {
	At    clock.Time
	Ratio int // packets
}

// sentPkt is one sent packet in the sender's ring.
type sentPkt struct {
	at    clock.Time
	size  int32
	data  bool
	state uint8     // pktOut, pktAcked, pktLost
	rate  rateStamp // delivery state when sent (ratesample.go)
}

const (
	pktOut uint8 = iota
	pktAcked
	pktLost
)

// DgramConn is one datagram-mode connection (both directions). Its
// application side is non-blocking; it is driven through its Endpoint. This
// file holds its state, handshake, dispatch and timers; the sending half is
// in dgram_sender.go and the receiving half in dgram_receiver.go.
type DgramConn struct {
	connCommon
	cfg         DgramConfig
	established bool

	// close
	closeWanted bool
	closeSent   int
	closeAt     clock.Time
	resetDue    bool

	// send side
	cc        ccalgo.Controller
	arc       ccalgo.AckRatioController
	rtt       rttEstimator
	rtoAt     clock.Time
	seq       uint64 // next sequence number
	una       uint64 // lowest unresolved sequence number in the ring
	ring      []sentPkt
	pipe      int    // data packets in flight
	recover   uint64 // a congestion signal for a packet below this is part of the last event
	ratio     int    // Ack Ratio sent to the peer
	ratioLog  []RatioChange
	src       DgramSource
	gen       traffic.RateSchedule // the rate-driven generator (DgramConfig.Rate, On, Off)
	scratch   []byte               // a generated datagram the full queue drops
	sq        dgramQueue
	peerHigh  uint64 // highest peer sequence number seen
	peerAny   bool
	ackAck    uint64 // highest ACK-carrying peer packet received
	ackAckDue bool

	// receive side
	vec       ackVecRecv
	rq        dgramQueue
	peerRatio int
	ratioSeq  uint64
	sinceAck  int // data packets since our last ACK
	ackDue    bool
	ackNow    bool
	ackAt     clock.Time
	hiArrive  clock.Time // arrival of the packet vec.hi
	tsHi      uint32     // its ts (echoed)

	pace  pacing      // the controller's pacing schedule
	rsamp rateSampler // delivery-rate estimation (ratesample.go)
	tf    dgramTFRC   // rate-based control (dgram_tfrc.go)

	out    dgramPacket
	vecBuf [MaxAckVector]byte
	stats  DgramStats
}

func newDgramConn(ep *Endpoint, cfg DgramConfig, now clock.Time) *DgramConn {
	c := &DgramConn{connCommon: newConnCommon(ep, cfg.Sink, now), cfg: cfg,
		rtoAt: clock.Never, closeAt: clock.Never, ackAt: clock.Never, gen: traffic.NewRateSchedule(cfg.Rate, cfg.On, cfg.Off)}
	c.rtt = newRTTEstimator(cfg.MinRTO, cfg.InitialRTO, cfg.MaxRTO)
	c.stats.Start = now
	c.stats.Finished = clock.Never
	c.peerRatio = 1 // until the peer says otherwise, acknowledge every packet
	return c
}

// establish builds the controller once the datagram size is known.
func (c *DgramConn) establish(now clock.Time, seedA, seedB uint64) error {
	c.mss = c.payloadMax(maxDgramOverhead)
	if c.cfg.CC != DgramCCNone {
		cc, err := ccalgo.NewDgram(c.cfg.CC, ccalgo.Env{MSS: c.mss, Rand: rand.New(rand.NewPCG(seedA, seedB))})
		if err != nil {
			return err
		}
		c.cc = cc
		c.arc, _ = cc.(ccalgo.AckRatioController)
		c.tf.tx, _ = cc.(ccalgo.TFRCSender)
		c.pace.set(cc, c.mss)
	}
	c.sq.init(c.cfg.SendQueue, c.mss)
	c.scratch = make([]byte, c.mss)
	c.rq.init(c.cfg.RecvQueue, c.mss)
	c.ring = make([]sentPkt, 64)
	c.established = true
	c.stats.Established = now
	c.pmtuStart()
	c.updateRatio(now)
	if c.src != nil {
		c.startGenerator(now)
	}
	return nil
}

// Established reports whether the handshake has completed.
func (c *DgramConn) Established() bool { return c.established }

// Config returns the connection's configuration.
func (c *DgramConn) Config() DgramConfig { return c.cfg }

// Controller returns the congestion controller (nil for "none" or before
// the handshake).
func (c *DgramConn) Controller() ccalgo.Controller { return c.cc }

// MaxPayload returns the largest application datagram, bytes (0 before the
// handshake completes).
func (c *DgramConn) MaxPayload() int { return c.mss }

// AckRatioLog returns the Ack Ratio changes (do not modify).
func (c *DgramConn) AckRatioLog() []RatioChange { return c.ratioLog }

// Stats returns a snapshot of the counters.
func (c *DgramConn) Stats() DgramStats {
	s := c.stats
	s.AckRatio = c.ratio
	s.InFlight = c.pipe
	if c.cc != nil && c.mss > 0 {
		s.CwndPackets = c.cc.Cwnd() / c.mss
	}
	s.PeerAckRatio = c.peerRatio
	s.SRTT, s.MinRTT, s.LastRTT, s.RTO, s.RTTSamples = c.rtt.srtt, c.rtt.min, c.rtt.latest, c.rtt.current(), c.rtt.samples
	s.VecForgot = c.vec.forgot
	s.AuthFailed, s.Replayed = c.auth.counts()
	s.Authenticated = c.auth != nil && c.auth.keyed
	s.Encrypted = s.Authenticated && c.auth.encrypt
	s.VecSpan = c.vec.span()
	s.PLPMTU = c.pmtuStats()
	if c.tf.rx != nil {
		s.LossEvents, s.LossEventRate = c.tf.rx.LossEvents(), c.tf.rx.LossEventRate()
	}
	return s
}

// Close ends the connection: once the send queue is empty a CLOSE is sent
// (repeated RTO apart, up to dgramCloseTries) and the connection ends when
// the peer's RESET arrives or the tries are used up.
func (c *DgramConn) Close(now clock.Time) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if c.done || c.closeWanted {
		return
	}
	c.closeWanted = true
	c.src = nil
	c.gen.Stop()
}

// Abort ends the connection at once, telling the peer with a RESET.
func (c *DgramConn) Abort(now clock.Time) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if c.done {
		return
	}
	c.resetDue = c.established
	c.finish(now, ErrAborted)
}

func (c *DgramConn) tsNow(now clock.Time) uint32 { return uint32(now.Sub(c.base) / time.Microsecond) }

func (c *DgramConn) emitMetrics(now clock.Time) {
	if c.sink == nil {
		return
	}
	ev := event.Event{Time: now, Kind: event.MetricsUpdated, InFlight: c.pipe * c.mss, SRTT: c.rtt.srtt, RTT: c.rtt.latest, MinRTT: c.rtt.min}
	if c.cc != nil {
		ev.Cwnd, ev.Ssthresh = c.cc.Cwnd(), c.cc.Ssthresh()
	}
	c.emit(ev)
}

func (c *DgramConn) finish(now clock.Time, err error) {
	if c.done {
		return
	}
	c.done = true
	c.err = err
	c.stats.Finished = now
	c.drainAt = now
	if err == nil {
		c.drainAt = now.Add(2 * c.rtt.current()) // answer a retransmitted CLOSE for a while
	}
}

// --- receiving: dispatch (halves: dgram_receiver.go, ACKs dgram_sender.go) --

// onAccept completes a client's handshake.
func (c *DgramConn) onAccept(now clock.Time, p *packet) RejectReason {
	if c.server || c.established || c.done {
		return RejectUnexpected
	}
	if r, err := c.authAccept(p, c.ep.rx); r != RejectNone {
		if err != nil {
			c.finish(now, err)
		}
		return r
	}
	c.peerCID = p.scid
	c.maxDatagram = min(c.cfg.MaxDatagram, int(p.maxDatagram))
	c.ecnOn = c.cfg.ECN && p.hsFlags&hsECN != 0
	c.takeReset(p)
	if p.tsecr != 0 {
		c.rtt.sample(time.Duration(c.tsNow(now)-p.tsecr) * time.Microsecond)
	}
	if err := c.establish(now, c.ep.rand.Uint64(), c.ep.rand.Uint64()); err != nil {
		c.finish(now, err)
		return RejectConfig
	}
	c.lastRecv = now
	c.hsAt = clock.Never
	c.pingDue = true // validates our address at the server
	return RejectNone
}

// onPacket handles a datagram-mode packet for this connection.
func (c *DgramConn) onPacket(now clock.Time, from netip.AddrPort, ce ecn.Codepoint, p *dgramPacket) RejectReason {
	if !c.established {
		return RejectUnexpected
	}
	if c.done {
		// Our RESET was lost: send it again, but only to the validated
		// peer and no larger than the CLOSE (no reflection).
		if p.flags&dflagCLOSE != 0 && c.err == nil && from == c.peer && dgramFixed+varintLen(c.seq) <= c.ep.rxLen {
			c.resetDue = true
		}
		return RejectOldPacket
	}
	if p.flags&dflagACK != 0 && p.ackNo >= c.seq {
		return RejectAckUnsent // before it changes anything, the idle timer included
	}
	c.lastNow = now
	c.lastRecv = now
	if !c.validated {
		c.confirm()
		if p.tsecr == c.acceptTS && p.tsecr != 0 {
			c.rtt.sample(time.Duration(c.tsNow(now)-p.tsecr) * time.Microsecond)
		}
	}
	// A new source address is validated before the peer moves (path.go).
	c.fromNewPath(now, from, c.ep.rxLen, c.rtt.current())
	// Peer sequence: ACK loss from gaps.
	newest := !c.peerAny || p.seq > c.peerHigh
	if newest {
		if c.peerAny && p.seq > c.peerHigh+1 && p.flags&dflagACK != 0 && c.pipe+int(c.seq-c.una) > 0 {
			// RFC 4341 §6.1.1: lost ACK packets (their sequence numbers
			// are missing) signal congestion on the acknowledgement path.
			c.stats.AckLoss += p.seq - c.peerHigh - 1
			if c.arc != nil {
				c.arc.OnAckCongestion(now)
				c.updateRatio(now)
			}
		}
		c.peerHigh = p.seq
		c.peerAny = true
	}
	// Receive state for our Ack Vector.
	isCE := c.ecnOn && ce == ecn.CE
	prevHi, hadAny := c.vec.hi, c.vec.any
	if !c.vec.received(p.seq, isCE) {
		c.stats.RecvDup++
		return RejectNone
	}
	if hadAny && p.seq > prevHi+1 {
		c.stats.RecvLost += p.seq - prevHi - 1
	} else if hadAny && p.seq < prevHi {
		c.stats.RecvLost-- // a reordered packet fills a gap counted before
	}
	if !hadAny || p.seq >= c.vec.hi {
		c.hiArrive = now
		c.tsHi = p.ts
	}
	if p.flags&dflagRATIO != 0 && (p.seq >= c.ratioSeq || c.ratioSeq == 0) {
		c.peerRatio = int(p.ackRatio)
		c.ratioSeq = p.seq
	}
	if p.flags&dflagACKACK != 0 {
		c.vec.ackAcked(p.ackAck)
	}
	if p.flags&dflagACK != 0 {
		c.onAck(now, p)
	}
	c.tfrcOnFeedback(now, p)
	if p.flags&dflagRESET != 0 {
		switch {
		case c.closeWanted:
			c.finish(now, nil)
		case p.closeCode == CloseReceiverFull && !c.server:
			c.finish(now, ErrReceiverFull) // evicted (admission.go)
		default:
			c.finish(now, ErrPeerAborted)
		}
		return RejectNone
	}
	if p.flags&dflagCLOSE != 0 {
		c.resetDue = true
		c.finish(now, nil)
		return RejectNone
	}
	if p.flags&dflagDATA != 0 {
		c.onData(now, isCE, p)
	} else if p.flags&dflagPING != 0 {
		c.ackDue, c.ackNow = true, true
	}
	return RejectNone
}

// --- timers ----------------------------------------------------------------

func (c *DgramConn) deadline() clock.Time {
	if c.done {
		if c.resetDue {
			return c.lastNow
		}
		return c.drainAt
	}
	timeout, _ := c.timeout(c.established, c.cfg.IdleTimeout, c.cfg.HandshakeTimeout)
	d := clock.Earliest(c.hsAt, c.rtoAt)
	if c.ackDue {
		d = clock.Earliest(d, c.ackAt)
	}
	d = clock.Earliest(d, c.closeAt)
	d = clock.Earliest(d, c.gen.Next())
	if c.established {
		d = clock.Earliest(d, clock.Earliest(c.tfrcDeadline(), c.pmtuDeadline()))
	}
	return clock.Earliest(d, c.lastRecv.Add(timeout))
}

func (c *DgramConn) onDeadline(now clock.Time) {
	c.lastNow = now
	if c.done {
		return
	}
	if err := c.timeoutErr(now, c.established, c.cfg.IdleTimeout, c.cfg.HandshakeTimeout); err != nil {
		c.finish(now, err)
		return
	}
	if c.handshakeTimer(now, &c.rtt) {
		c.stats.RTOs++
		c.emit(event.Event{Time: now, Kind: event.RTO, Reason: uint8(RTOHandshake)})
	}
	if c.ackDue && c.ackAt != clock.Never && !now.Before(c.ackAt) {
		c.ackNow = true
	}
	if c.closeAt != clock.Never && !now.Before(c.closeAt) {
		c.closeAt = clock.Never
		if c.closeSent >= dgramCloseTries {
			c.finish(now, nil)
			return
		}
	}
	if c.rtoAt != clock.Never && !now.Before(c.rtoAt) {
		c.onRTO(now)
	}
	if c.established {
		c.tfrcTimers(now)
	}
	if c.pmtuOn {
		c.pmtu.onTimer(now)
	}
	// Released a quantum ahead only here, at the generator's own wake-up:
	// a wake-up for anything else (an ACK) then finds nothing new due, and
	// the generator's next one is a quantum on.
	c.generate(now, now.Add(c.cfg.PacingQuantum))
}
