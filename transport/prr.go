package transport

import (
	"fmt"
	"math"

	"cclab/internal/spec"
)

// PRR is Proportional Rate Reduction (RFC 6937) on RFC 6675 loss detection:
// during recovery the amount sent follows the data delivered so that the
// window comes down smoothly from the flight size at the loss (RecoverFS) to
// ssthresh, and once pipe is at or below ssthresh a reduction bound decides
// how fast it may catch up:
//
//	on entry:  prr_delivered = 0, prr_out = 0, RecoverFS = snd.nxt - snd.una
//	per ACK:   DeliveredData = change in snd.una + change in SACKed bytes
//	           prr_delivered += DeliveredData
//	           if pipe > ssthresh:   sndcnt = CEIL(prr_delivered*ssthresh/RecoverFS) - prr_out
//	           else if bound = crb:  sndcnt = MIN(ssthresh - pipe, prr_delivered - prr_out)
//	           else (ssrb):          sndcnt = MIN(ssthresh - pipe,
//	                                         MAX(prr_delivered - prr_out, DeliveredData) + MSS)
//	per send:  prr_out += bytes sent (only while sndcnt allows)
//
// What is sent is chosen by NextSeg (segments RFC 6675 marks lost first). The
// fast retransmission on entry is sent whatever sndcnt (RFC 6675 step 4.3;
// Linux likewise forces one segment when prr_out is 0). On exit the
// controller sets cwnd (ssthresh for Reno-style controllers, RFC 6937 §3).
//
// Option lostretx adds lost-retransmission detection (lostretx.go).
//
// bound=ns3 is ns-3 3.37's TcpPrrRecovery::DoRecovery instead of RFC 6937's
// SSRB (PRRSndCntNS3): the entry ACK's DeliveredData counts, and the amount
// is sent in whole segments only.
type PRR struct {
	sackLoss
	ssrb    bool
	ns3     bool // bound=ns3
	ns3Acct bool // option ns3acct: ns-3's uint32 arithmetic and DoRecovery calls

	delivered int // prr_delivered, bytes
	out       int // prr_out, bytes
	recoverFS int // RecoverFS, bytes
	sndcnt    int // bytes that may still be sent for the latest ACK
}

// PRRConfig is the parameter set of prr.
type PRRConfig struct {
	SACKConfig
	Bound string `param:"bound" help:"reduction bound once pipe <= ssthresh: ssrb (slow start, RFC 6937 default), crb (conservative) or ns3 (ns-3 3.37's TcpPrrRecovery: SSRB only on ACKs of retransmitted data, else DeliveredData; whole segments)"`
	// NS3Acct is ns-3 3.37's accounting with bound=ns3 (PRR.ns3Acct).
	NS3Acct bool `param:"ns3acct" help:"with bound=ns3: ns-3 3.37's own accounting, prr_delivered counted once per DoRecovery call (twice for an ACK that SACKs new data and moves snd.una by a segment: DupAck and the partial-ACK branch) and its uint32_t arithmetic (prr_delivered * ssthresh modulo 2^32; prr_delivered - prr_out unsigned in SSRB's bound); default off: RFC 6937 counts DeliveredData once, in unbounded signed arithmetic"`
}

// Name returns "prr".
func (r *PRR) Name() string { return "prr" }

// PRRState returns prr_delivered, prr_out and RecoverFS, bytes.
func (r *PRR) PRRState() (delivered, out, recoverFS int) { return r.delivered, r.out, r.recoverFS }

// SndCnt returns the bytes that may still be sent in response to the latest
// ACK (RFC 6937 sndcnt minus what was sent since).
func (r *PRR) SndCnt() int { return r.sndcnt }

// PRRSndCnt is the RFC 6937 §3 sndcnt for one ACK, bytes (may be negative):
// prrDelivered and prrOut are prr_delivered (including this ACK) and prr_out,
// delivered is this ACK's DeliveredData.
func PRRSndCnt(ssrb bool, prrDelivered, prrOut, delivered, pipe, ssthresh, recoverFS, mss int) int {
	if pipe > ssthresh {
		// Proportional rate reduction; CEIL of the integer division.
		num := int64(prrDelivered) * int64(ssthresh)
		return int((num+int64(recoverFS)-1)/int64(max(recoverFS, 1))) - prrOut
	}
	limit := prrDelivered - prrOut // PRR-CRB
	if ssrb {
		limit = max(prrDelivered-prrOut, delivered) + mss // PRR-SSRB
	}
	return min(ssthresh-pipe, limit)
}

// PRRSndCntNS3 is ns-3 3.37's sndcnt for one ACK (TcpPrrRecovery::
// DoRecovery with ReductionBound SSRB), bytes: RFC 6937's proportional part
// while pipe > ssthresh; below it, SSRB's bound only for an ACK that
// cumulatively acknowledged retransmitted data (retxAcked, ns-3's
// m_isRetransDataAcked), and otherwise no more than this ACK's
// DeliveredData (RFC 6937's SSRB allows MAX(prr_delivered - prr_out,
// DeliveredData) + MSS on every ACK).
func PRRSndCntNS3(prrDelivered, prrOut, delivered, pipe, ssthresh, recoverFS, mss int, retxAcked bool) int {
	if pipe > ssthresh {
		return PRRSndCnt(true, prrDelivered, prrOut, delivered, pipe, ssthresh, recoverFS, mss)
	}
	limit := delivered
	if retxAcked {
		limit = max(prrDelivered-prrOut, delivered) + mss
	}
	return min(ssthresh-pipe, limit)
}

// PRRSndCntNS3Acct is PRRSndCntNS3 in ns-3 3.37's own arithmetic (option
// ns3acct), bytes: TcpPrrRecovery keeps prr_delivered, prr_out and
// RecoverFS as uint32_t (tcp-prr-recovery.h:89-91), so the proportional
// part's product prr_delivered * ssthresh is taken modulo 2^32 before it
// becomes a double (tcp-prr-recovery.cc:96; it wraps from about 76
// segments delivered at an ssthresh of 27 segments of 1448 bytes), and
// SSRB's prr_delivered - prr_out is unsigned, so once prr_out exceeds
// prr_delivered MAX(prr_delivered - prr_out, DeliveredData) + MSS is
// prr_delivered - prr_out + MSS modulo 2^32, read back as an int (:109).
// RFC 6937 §3 computes both in signed, unbounded arithmetic (PRRSndCnt).
func PRRSndCntNS3Acct(prrDelivered, prrOut, delivered, pipe, ssthresh, recoverFS, mss int, retxAcked bool) int {
	if pipe > ssthresh {
		prod := uint32(prrDelivered) * uint32(ssthresh)
		return int(math.Ceil(float64(prod)/float64(uint32(max(recoverFS, 1)))) - float64(uint32(prrOut)))
	}
	limit := delivered
	if retxAcked {
		d := uint32(prrDelivered) - uint32(prrOut)
		limit = int(int32(max(d, uint32(delivered)) + uint32(mss)))
	}
	return min(ssthresh-pipe, limit)
}

// ns3Calls returns how many times ns-3 3.37 runs TcpPrrRecovery::
// DoRecovery for an ACK in (or entering) recovery, each adding the ACK's
// DeliveredData to prr_delivered: once from DupAck when the ACK SACKs new
// data (tcp-socket-base.cc:1750, and EnterRecovery's call on the ACK that
// starts it), once more from ProcessAck's partial-ACK branch when it moves
// snd.una by at least one segment (:2052-2055). RFC 6937 counts every ACK's
// DeliveredData once.
func (r *PRR) ns3Calls(a *AckInfo) int {
	n := 0
	if a.SackedBytes > 0 {
		n++
	}
	if a.CumAck-a.PrevUna >= uint64(r.mss) {
		n++
	}
	return max(n, 1)
}

// OnAck runs RFC 6937 §3 per ACK.
func (r *PRR) OnAck(x *Ctx, a *AckInfo) {
	entered := r.update(x, a)
	if entered {
		r.enter(x) // startEpisode runs at its end
		if !r.ns3 {
			return
		}
		// ns-3's EnterRecovery runs DoRecovery with the entry ACK's
		// delivered bytes.
	}
	if !r.inRec {
		return
	}
	d := a.AckedBytes + a.SackedBytes
	r.delivered += d
	pipe, ssthresh := r.Pipe(x.SB), x.CC.Ssthresh()
	if r.ns3 {
		// A cumulative advance in an episode, without reordering, is
		// the arrival of a segment retransmitted in it (below HighRxt).
		retxAcked := !entered && a.Advanced() && a.PrevUna < r.highRxt
		if r.ns3Acct {
			r.delivered += (r.ns3Calls(a) - 1) * d
			r.sndcnt = max(0, PRRSndCntNS3Acct(r.delivered, r.out, d, pipe, ssthresh, r.recoverFS, r.mss, retxAcked))
			return
		}
		r.sndcnt = max(0, PRRSndCntNS3(r.delivered, r.out, d, pipe, ssthresh, r.recoverFS, r.mss, retxAcked))
		return
	}
	r.sndcnt = max(0, PRRSndCnt(r.ssrb, r.delivered, r.out, d, pipe, ssthresh, r.recoverFS, r.mss))
}

// Next sends up to sndcnt (rounded up to whole segments), NextSeg choosing what.
// startEpisode resets the PRR state at the start of an episode (RFC 6937
// §3 initialization); sackLoss.enter calls it.
func (r *PRR) startEpisode(x *Ctx) {
	r.delivered, r.out, r.sndcnt = 0, 0, 0
	r.recoverFS = x.SB.FlightSize()
}

func (r *PRR) Next(x *Ctx) Action {
	if !r.inRec {
		return r.normal(x)
	}
	if act, ok := r.fastRetransmit(x); ok {
		return act
	}
	if r.ns3 {
		// ns-3's SendPendingData sends only whole segments while the
		// window left (cwnd = pipe + sndcnt) is below one.
		if r.sndcnt < r.mss {
			return NoSend
		}
		return r.nextSeg(x, r.sndcnt/r.mss*r.mss)
	}
	if r.sndcnt <= 0 {
		return NoSend
	}
	// sndcnt is in bytes; a positive remainder permits a whole segment, as
	// the RFC's CEIL does when it counts in segments (prr_out then runs
	// ahead and the next sndcnt is smaller).
	return r.nextSeg(x, (r.sndcnt+r.mss-1)/r.mss*r.mss)
}

// OnSent counts prr_out.
func (r *PRR) OnSent(x *Ctx, retransmit bool, bytes int) {
	if r.inRec {
		r.out += bytes
		r.sndcnt = max(0, r.sndcnt-bytes)
	}
	r.sackLoss.OnSent(x, retransmit, bytes)
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "prr",
		Doc:      "Proportional Rate Reduction, RFC 6937 (bound=ssrb|crb), RFC 6675 loss detection; option lostretx",
		Defaults: func() any { return &PRRConfig{SACKConfig: SACKConfig{DupThresh: DupThresh, TLP: true}, Bound: "ssrb"} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			p := newStrategy[PRR](env)
			if err := p.init("prr", *cfg.(*PRRConfig), env, p); err != nil {
				return nil, err
			}
			return p, nil
		},
	})
}

// init validates the parameters and sets up r in place (in a PRR or a
// RACK on the heap: sackLoss.init); entered is the strategy whose
// startEpisode runs when an episode starts.
func (r *PRR) init(name string, c PRRConfig, env RecoveryEnv, entered episodeStarter) error {
	if err := r.sackLoss.init(name, c.SACKConfig, env, entered); err != nil {
		return err
	}
	switch c.Bound {
	case "ssrb", "crb", "ns3":
	default:
		return fmt.Errorf("%s: parameter bound=%q: must be ssrb, crb or ns3", name, c.Bound)
	}
	r.ssrb, r.ns3 = c.Bound == "ssrb", c.Bound == "ns3"
	if c.NS3Acct && !r.ns3 {
		return fmt.Errorf("%s: option ns3acct needs bound=ns3 (it is ns-3's accounting of its own bound)", name)
	}
	r.ns3Acct = c.NS3Acct
	return nil
}
