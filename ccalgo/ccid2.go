package ccalgo

import (
	"fmt"
	"strings"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// CCID2 constants (RFC 4341).
const (
	// CCID2DefaultAckRatio is the initial Ack Ratio, packets (RFC 4341 §6.1.2:
	// "the default value of Ack Ratio is 2").
	CCID2DefaultAckRatio = 2
	// RFC3390IWBytes is the byte bound of the RFC 3390 initial window that
	// RFC 4341 §5 adopts: min(4*s, max(2*s, 4380 bytes)).
	RFC3390IWBytes = 4380
	// CCID2DupThresh is the number of later packets that must be
	// acknowledged before a missing packet is declared lost (RFC 4341 §5,
	// NUMDUPACK = 3 as in TCP). The transport's datagram mode applies it.
	CCID2DupThresh = 3
)

// CCID2Config configures CCID2.
type CCID2Config struct {
	// AckRatio is the initial (and uncongested) Ack Ratio R, packets: the
	// receiver acknowledges every R data packets (RFC 4341 §6).
	AckRatio int `param:"ackratio" help:"initial Ack Ratio, packets: the receiver acknowledges every R data packets (RFC 4341 §6.1.2; default 2)"`
	// Adapt lets Ack Ratio adapt to congestion of the acknowledgement path
	// (RFC 4341 §6.1.2): doubled on lost acknowledgements, decreased by one
	// after cwnd/(R^2-R) clean windows. false keeps R at AckRatio (still
	// capped at ceil(cwnd/2)).
	Adapt bool `param:"adapt" help:"adapt Ack Ratio to acknowledgement loss (RFC 4341 §6.1.2; default true)"`
	// IW is the initial window in packets; 0 selects RFC 3390
	// min(4, max(2, 4380 bytes / s)) as RFC 4341 §5 says.
	IW int `param:"iw" help:"initial window, packets; 0 = RFC 3390 min(4*s, max(2*s, 4380 B))/s"`
}

// DefaultCCID2Config returns the defaults: Ack Ratio 2, adaptive, RFC 3390 IW.
func DefaultCCID2Config() CCID2Config {
	return CCID2Config{AckRatio: CCID2DefaultAckRatio, Adapt: true}
}

// AckRatioController is implemented by controllers that also govern the
// acknowledgement stream of the datagram mode (CCID2, RFC 4341 §6). The
// transport sends AckRatio to the receiver with its data and reports
// congestion of the acknowledgement path.
type AckRatioController interface {
	// AckRatio returns the Ack Ratio the receiver must use, packets (>= 1).
	AckRatio() int
	// OnAckCongestion is called when acknowledgement packets were lost or
	// ECN-marked (detected from gaps in their sequence numbers).
	OnAckCongestion(now clock.Time)
}

// CCID2 is DCCP's TCP-like congestion control (RFC 4341) for the datagram
// mode. It counts in packets: cwnd and ssthresh are packets, and the
// Controller methods that speak bytes convert with the packet size s
// (Env.MSS): Cwnd() = cwnd*s, and Ack.AckedPackets is what counts. It
// implements Controller (so the datagram mode needs nothing else and Reno
// can run there too) and AckRatioController.
//
// Rules (RFC 4341 §5, §6):
//   - slow start: cwnd += 1 per newly acknowledged packet while cwnd <
//     ssthresh; congestion avoidance: cwnd += 1 per cwnd acknowledged packets;
//   - congestion (a packet reported missing with three later packets
//     acknowledged, or an ECN mark; the transport detects both): cwnd halves
//     (at least 1), ssthresh = max(cwnd, 2), at most once per RTT (a signal
//     less than one smoothed RTT after the last halving is ignored);
//   - timeout: ssthresh = max(cwnd/2, 2), cwnd = 1, Ack Ratio = 1 (the
//     transport backs off the timer);
//   - Ack Ratio R: 1 <= R <= ceil(cwnd/2) always; with Adapt, R doubles on
//     acknowledgement loss (at most once per RTT) and drops by one after
//     cwnd/(R^2-R) consecutive windows without acknowledgement loss, never
//     below the configured value; it returns to the configured value as
//     soon as ceil(cwnd/2) allows (after a timeout or a cwnd reduction).
type CCID2 struct {
	cfg      CCID2Config
	mss      int // packet size s, bytes: converts packets to the bytes of Controller
	cwnd     int // packets
	ssthresh int // packets
	caAcked  int // packets acknowledged in congestion avoidance since the last increase
	ratio    int // current Ack Ratio, packets
	target   int // the Ack Ratio without clamping by cwnd, packets
	srtt     time.Duration
	lastCut  clock.Time // last halving (Never: none)
	lastAckC clock.Time // last Ack Ratio doubling
	winAcked int        // packets acknowledged in the current clean window
	clean    int        // consecutive windows without acknowledgement loss
	afterRTO bool
	halvings int
}

// NewCCID2 returns a CCID2 controller.
func NewCCID2(cfg CCID2Config, env Env) (*CCID2, error) {
	if env.MSS <= 0 {
		return nil, fmt.Errorf("ccid2: packet size %d: must be > 0 bytes", env.MSS)
	}
	if cfg.AckRatio < 1 || cfg.AckRatio > MaxWindowParam {
		return nil, fmt.Errorf("ccid2: parameter ackratio=%d: must be 1..%d packets", cfg.AckRatio, MaxWindowParam)
	}
	if cfg.IW < 0 || cfg.IW > MaxWindowParam {
		return nil, fmt.Errorf("ccid2: parameter iw=%d: must be 0..%d packets (0 = RFC 3390)", cfg.IW, MaxWindowParam)
	}
	iw := cfg.IW
	if iw == 0 {
		iw = min(4*env.MSS, max(2*env.MSS, RFC3390IWBytes)) / env.MSS
	}
	c := &CCID2{cfg: cfg, mss: env.MSS, cwnd: iw, ssthresh: InfiniteSsthresh / env.MSS,
		target: cfg.AckRatio, lastCut: clock.Never, lastAckC: clock.Never}
	c.clampRatio()
	return c, nil
}

// Name returns "ccid2".
func (c *CCID2) Name() string { return "ccid2" }

// CwndPackets returns cwnd, packets.
func (c *CCID2) CwndPackets() int { return c.cwnd }

// SsthreshPackets returns ssthresh, packets.
func (c *CCID2) SsthreshPackets() int { return c.ssthresh }

// AckRatio returns the current Ack Ratio, packets.
func (c *CCID2) AckRatio() int { return c.ratio }

// clampRatio keeps 1 <= R <= ceil(cwnd/2) (RFC 4341 §6.1.2), R = target
// where that allows.
func (c *CCID2) clampRatio() {
	c.ratio = max(1, min(c.target, (c.cwnd+1)/2))
}

// OnSent does nothing: the transport counts packets in flight.
func (c *CCID2) OnSent(clock.Time, int, int) {}

// OnAck grows cwnd per newly acknowledged packet (RFC 4341 §5) and counts
// clean windows for the Ack Ratio.
func (c *CCID2) OnAck(a Ack) {
	if a.SRTT > 0 {
		c.srtt = a.SRTT
	}
	n := a.AckedPackets
	if n <= 0 {
		return
	}
	c.afterRTO = false
	w := c.cwnd // the window these packets belong to
	if !a.AppLimited {
		for i := 0; i < n; i++ {
			if c.cwnd < c.ssthresh {
				c.cwnd++ // slow start: +1 per acknowledged packet
				continue
			}
			c.caAcked++
			if c.caAcked >= c.cwnd { // congestion avoidance: +1 per window
				c.caAcked = 0
				c.cwnd++
			}
		}
	}
	if c.cfg.Adapt {
		c.winAcked += n
		for c.winAcked >= w {
			c.winAcked -= w
			c.clean++
			// RFC 4341 §6.1.2: decrease R by one for every cwnd/(R^2-R)
			// consecutive windows without lost or marked acknowledgements.
			if c.target > c.cfg.AckRatio {
				r := c.target
				if c.clean >= max(1, w/(r*r-r)) {
					c.target--
					c.clean = 0
				}
			} else {
				c.clean = 0
			}
		}
	}
	c.clampRatio()
}

// OnCongestion halves cwnd (at least 1 packet) and sets ssthresh =
// max(cwnd, 2) for a loss or an ECN mark, at most once per smoothed RTT.
func (c *CCID2) OnCongestion(g Congestion) {
	if c.lastCut != clock.Never && c.srtt > 0 && g.Now.Sub(c.lastCut) < c.srtt {
		return // RFC 4341 §5: at most one halving per window of data
	}
	c.lastCut = g.Now
	c.halvings++
	c.cwnd = max(c.cwnd/2, 1)
	c.ssthresh = max(c.cwnd, MinSsthreshSegments)
	c.caAcked = 0
	c.clampRatio()
}

// OnRecoveryExit does nothing: CCID2 halves at once in OnCongestion.
func (c *CCID2) OnRecoveryExit(clock.Time, int) {}

// OnRTO sets ssthresh = max(cwnd/2, 2), cwnd = 1 and Ack Ratio = 1 (RFC 4341
// §5 TCP-like timeout; §6.1.2 R <= ceil(cwnd/2) = 1).
func (c *CCID2) OnRTO(clock.Time, int) {
	if !c.afterRTO {
		c.ssthresh = max(c.cwnd/2, MinSsthreshSegments)
	}
	c.afterRTO = true
	c.cwnd = 1
	c.caAcked = 0
	c.clampRatio()
}

// OnAckCongestion doubles the Ack Ratio target (RFC 4341 §6.1.2), at most
// once per smoothed RTT, when Adapt is on.
func (c *CCID2) OnAckCongestion(now clock.Time) {
	if !c.cfg.Adapt {
		return
	}
	if c.lastAckC != clock.Never && c.srtt > 0 && now.Sub(c.lastAckC) < c.srtt {
		return
	}
	c.lastAckC = now
	c.clean, c.winAcked = 0, 0
	c.target = min(2*c.target, max(1, (c.cwnd+1)/2), 1<<16)
	c.target = max(c.target, c.cfg.AckRatio)
	c.clampRatio()
}

// SetMSS changes the packet size s, bytes (SegmentSizer: datagram size
// discovery, RFC 8899). CCID2 counts its window in packets (RFC 4341 §5), so
// a larger s alone would raise the window in bytes by as much, and RFC 8899
// §4.4 forbids a PLPMTU update to increase the congestion window in bytes:
// a larger s scales cwnd and ssthresh down to the packets of the new size
// that the bytes they held make (cwnd at least 1 packet, ssthresh at least
// 2). A smaller s (a black hole's fall back to the base size) keeps the
// packet counts, and the window in bytes falls with the size.
func (c *CCID2) SetMSS(mss int) bool {
	if mss <= 0 || mss > MaxSegment {
		return false
	}
	if mss > c.mss {
		c.cwnd = max(c.cwnd*c.mss/mss, 1)
		if c.ssthresh < InfiniteSsthresh/c.mss {
			c.ssthresh = max(c.ssthresh*c.mss/mss, MinSsthreshSegments)
		} else {
			c.ssthresh = InfiniteSsthresh / mss
		}
		c.caAcked = 0
		c.clampRatio()
	}
	c.mss = mss
	return true
}

// Cwnd returns cwnd in bytes (packets times the packet size).
func (c *CCID2) Cwnd() int { return c.cwnd * c.mss }

// Ssthresh returns ssthresh in bytes.
func (c *CCID2) Ssthresh() int { return c.ssthresh * c.mss }

// State returns a snapshot; Vars carry cwnd and ssthresh in packets and the
// Ack Ratio.
func (c *CCID2) State() State {
	ph := PhaseCongAvoid
	switch {
	case c.afterRTO:
		ph = PhaseAfterRTO
	case c.cwnd < c.ssthresh:
		ph = PhaseSlowStart
	}
	return State{Cwnd: c.Cwnd(), Ssthresh: c.Ssthresh(), Phase: ph, Vars: []Var{
		{Name: "cwnd_packets", Value: float64(c.cwnd), Unit: "packets"},
		{Name: "ack_ratio", Value: float64(c.ratio), Unit: "packets"},
		{Name: "halvings", Value: float64(c.halvings), Unit: "count"},
	}}
}

// DgramRegistry holds the controllers that exist only for the datagram
// mode (CCID2). They are kept out of Registry because they need the
// datagram mode's packet-counted acknowledgements and Ack Ratio; the
// datagram mode looks a name up here first and then in Registry (Reno,
// CUBIC, ... then count bytes as packets times the packet size).
var DgramRegistry = spec.NewRegistry[Controller, Env]("datagram congestion controller")

// NewDgram builds a datagram-mode controller: a DgramRegistry entry such as
// "ccid2:ackratio=1", or any Registry controller.
func NewDgram(s string, env Env) (Controller, error) {
	name, _, _ := strings.Cut(s, ":")
	if _, ok := DgramRegistry.Lookup(name); ok {
		return DgramRegistry.New(s, env)
	}
	return Registry.New(s, env)
}

func init() {
	spec.Add(DgramRegistry, "ccid2", "DCCP CCID2 (RFC 4341): TCP-like, packet-counted, Ack Ratio; for -mode datagram",
		DefaultCCID2Config, func(c CCID2Config, env Env) (Controller, error) { return NewCCID2(c, env) })
}
