package transport

import (
	"fmt"

	"cclab/internal/spec"
)

// NewReno is the NewReno loss recovery of RFC 6582 (§3.2, "Impatient"
// timer variant): fast retransmit on DupThresh duplicate ACKs, cwnd inflation
// by one SMSS per further duplicate ACK, a partial ACK retransmits the next
// hole and deflates the window, and recovery ends only when the recovery
// point "recover" (the highest data sent when recovery began) is
// cumulatively acknowledged. It does not use SACK information.
type NewReno struct {
	fastRecovery
	recover    uint64 // RFC 6582 "recover": SND.NXT when recovery began (exclusive), or after an RTO
	recoverSet bool
	partials   int  // partial ACKs in this episode
	atRecover  bool // NewRenoConfig.AtRecover
	pipeFlight bool // NewRenoConfig.Flight is FlightPipe
}

// NewRenoConfig configures NewReno recovery.
type NewRenoConfig struct {
	DupAckConfig
	// AtRecover lets duplicate ACKs whose cumulative point is exactly one
	// past recover (everything sent before the last recovery or RTO
	// acknowledged) start a new recovery, as ns-3 3.37 does
	// (TcpSocketBase::DupAck enters when m_highRxAckMark >= m_recover,
	// m_recover being HighData). RFC 6582 §3.2 step 2 and §4 do not: such
	// ACKs do not "cover more than recover", and after an RTO they are
	// what go-back-N's retransmissions of data the receiver already holds
	// produce. Off by default.
	AtRecover bool `param:"atrecover" help:"duplicate ACKs at exactly one past recover start a new recovery (ns-3 3.37's TcpSocketBase::DupAck; not RFC 6582 §3.2 step 2)"`
	// NoLT turns RFC 3042 Limited Transmit off (RenoConfig.NoLT).
	NoLT bool `param:"nolt" help:"no RFC 3042 Limited Transmit on the first two duplicate ACKs (pre-2001 TCP, ns-2's Agent/TCP/Newreno)"`
	ExitGrowConfig
	// Flight is what ssthresh is computed from on entering recovery:
	// FlightSize (default) or FlightPipe.
	Flight string `param:"flight" help:"what ssthresh is computed from on entering recovery and at a timeout: flightsize (RFC 5681 §3.2 step 2 and §3.1: FlightSize, bounded by cwnd to leave out Limited Transmit and the inflation; default) or pipe (FlightSize less one segment per duplicate ACK, as ns-3 3.37's TcpSocketBase::EnterRecovery and ReTxTimeout count BytesInFlight without SACK)"`
}

// Name returns "newreno".
func (r *NewReno) Name() string { return "newreno" }

// Recover returns the recovery point (exclusive end of the data sent when
// the latest recovery began or the latest RTO fired), bytes.
func (r *NewReno) Recover() uint64 { return r.recover }

// OnAck applies RFC 6582 §3.2 steps 1-5.
func (r *NewReno) OnAck(x *Ctx, a *AckInfo) {
	switch {
	case !r.inRec:
		// Step 2: enter only if the ACK covers more than recover, so that
		// duplicate ACKs for data sent before an earlier recovery or RTO do
		// not cause a second reduction. r.recover is one past the RFC's
		// (inclusive) recover, so an ACK of r.recover covers recover but
		// not more (§4: go-back-N's duplicates of received data); with
		// atRecover (ns-3) it is enough.
		if !r.countDupAck(a) || (r.recoverSet && !r.covers(a.CumAck)) {
			return
		}
		r.recover = x.SB.Nxt()
		r.recoverSet = true
		r.partials = 0
		if r.pipeFlight {
			r.enterFlight(x, max(0, x.SB.FlightSize()-r.dupAcks*r.mss))
		} else {
			r.enter(x) // steps 2-3
		}
	case !a.Advanced():
		r.inflate(a) // step 4
	case a.CumAck >= r.recover:
		// Step 3 of §3.2 "full acknowledgment": exit; the controller sets
		// cwnd (to ssthresh or min(ssthresh, max(FlightSize, SMSS)+SMSS)).
		r.exit(x)
	default:
		r.partialAck(x, a)
	}
}

// covers reports whether a cumulative ACK lets duplicate ACKs start a new
// recovery: beyond r.recover (RFC 6582), or at it with atRecover (ns-3).
func (r *NewReno) covers(ack uint64) bool {
	return ack > r.recover || (r.atRecover && ack == r.recover)
}

// partialAck applies step 5, partial acknowledgment: retransmit the first
// unacknowledged segment, deflate by the newly acknowledged amount, add back
// one SMSS if at least one SMSS was acknowledged.
func (r *NewReno) partialAck(x *Ctx, a *AckInfo) {
	acked := int(a.CumAck - a.PrevUna)
	r.win -= acked
	if acked >= r.mss {
		r.win += r.mss
	}
	r.win = max(r.win, r.mss)
	r.departed = max(0, r.departed-max(0, acked-r.mss)) // the duplicate-ACKed segments it covers
	r.retransmitFirst(x)
	r.partials++
	if r.partials > 1 {
		// "Impatient" variant: only the first partial ACK resets the timer.
		x.RestartRTO = false
	}
}

// rtoFlight returns, with flight=pipe, the flight a timeout's ssthresh
// is computed from as ns-3 3.37 counts BytesInFlight() without SACK before
// ReTxTimeout marks everything lost: FlightSize less one "Reno SACK" per
// duplicate ACK, that is, outside recovery less the duplicate ACKs counted,
// in recovery less what the window inflation stands for (the inflated
// window above ssthresh: DupThresh plus the further duplicate ACKs, less
// what partial ACKs deflated).
func (r *NewReno) rtoFlight(x *Ctx) (int, bool) {
	if !r.pipeFlight {
		return 0, false
	}
	left := r.dupAcks * r.mss
	if r.inRec {
		left = max(0, r.win-x.CC.Ssthresh())
	}
	return max(0, x.SB.FlightSize()-left), true
}

// OnRTO leaves recovery and records recover = SND.NXT (RFC 6582 §3.2 step 2
// note: after a timeout, record the highest sequence number transmitted).
func (r *NewReno) OnRTO(x *Ctx) {
	r.reset()
	r.recover = x.SB.Nxt()
	r.recoverSet = true
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "newreno",
		Doc:      "NewReno fast recovery, RFC 6582 (partial ACKs retransmit the next hole)",
		Defaults: func() any { return &NewRenoConfig{DupAckConfig: DupAckConfig{DupThresh: DupThresh}} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*NewRenoConfig)
			switch c.Flight {
			case "", FlightSize, FlightPipe:
			default:
				return nil, fmt.Errorf("newreno: parameter flight=%q: must be %s or %s", c.Flight, FlightSize, FlightPipe)
			}
			return recoveryEntry("newreno", "", func(d DupAckConfig, env RecoveryEnv) Recovery {
				return &NewReno{fastRecovery: fastRecovery{dupThresh: d.DupThresh, mss: env.MSS, noLT: c.NoLT, exitGrow: c.ExitGrow}, atRecover: c.AtRecover, pipeFlight: c.Flight == FlightPipe}
			}).Build(&c.DupAckConfig, env)
		},
	})
}

// recoveryEntry builds a registry entry for a duplicate-ACK strategy.
func recoveryEntry(name, doc string, build func(DupAckConfig, RecoveryEnv) Recovery) spec.Entry[Recovery, RecoveryEnv] {
	return spec.Entry[Recovery, RecoveryEnv]{
		Name:     name,
		Doc:      doc,
		Defaults: func() any { return &DupAckConfig{DupThresh: DupThresh} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*DupAckConfig)
			if err := checkDupThresh(name, c.DupThresh); err != nil {
				return nil, err
			}
			if env.MSS <= 0 {
				return nil, fmt.Errorf("%s: RecoveryEnv.MSS=%d: must be a positive segment size in bytes", name, env.MSS)
			}
			return build(c, env), nil
		},
	}
}
