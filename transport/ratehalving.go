package transport

import (
	"fmt"

	"cclab/ccalgo"
	"cclab/internal/spec"
)

// RateHalving is the Rate-Halving algorithm (M. Mathis, J. Semke, J. Mahdavi,
// K. Lahey, "The Rate-Halving Algorithm for TCP Congestion Control",
// draft-mathis-tcp-ratehalving, 1999) on RFC 6675 loss detection. Instead of
// halving the window at once and then waiting (Fast Recovery sends new data
// only in the second half of the recovery RTT), the window is reduced by one
// segment for every two segments delivered over the whole episode, so the
// sender keeps transmitting one segment per two acknowledged and stays
// self-clocked:
//
//	on entry:  rhcwnd = min(cwnd, FlightSize)   (the window at the time of the loss)
//	per ACK:   delivered += newly acknowledged bytes (cumulative + SACKed)
//	           rhcwnd -= delivered/2 (the remainder carries over)
//	           rhcwnd  = max(rhcwnd, ssthresh)  (bound 1: the reduction ends at
//	                     half the flight size at the loss, ssthresh from the controller)
//	           rhcwnd  = min(rhcwnd, pipe + maxburst*SMSS) (bound 2: no bursts
//	                     when data left the network without permitting sends)
//	send while pipe < rhcwnd (retransmissions by NextSeg first)
//
// At the end of the episode the controller sets cwnd (ssthresh for
// Reno-style controllers). With maxburst = 1 this is the rate-halving
// implemented by its authors in Linux 2.4 (tcp_cwnd_down, tcp_moderate_cwnd).
//
// Option lostretx adds lost-retransmission detection (lostretx.go).
//
// Option draft follows the draft's adjustment interval instead of starting
// at DupThresh (draftrh.go): it begins on the first ACK whose SACK blocks
// show a new hole (§4.4), rhcwnd is reduced by half the distance snd.fack
// advances plus half of each new hole (§4.6), data is sent while awnd + len
// <= rhcwnd with awnd = snd.nxt - snd.fack + retran_data (§4.3), and only
// the retransmission waits for DupThresh (thresholded retransmission,
// §6.2.1); SACK blocks that vanish before any retransmission (reordering)
// restore the window (§4.8).
type RateHalving struct {
	sackLoss
	maxBurst int // bound 2, segments
	win      int // rhcwnd, bytes
	carry    int // delivered bytes not yet used for a reduction (< 2)
	draftRH      // option draft's state (draftrh.go)
}

// RateHalvingConfig is the parameter set of ratehalving.
type RateHalvingConfig struct {
	SACKConfig
	MaxBurst int `param:"maxburst" help:"bound: the window never exceeds pipe + maxburst segments during recovery, packets (draft: 1)"`
	// Draft selects the draft's adjustment interval (RateHalving, draftrh.go).
	Draft bool `param:"draft" help:"the draft's adjustment interval (draft-mathis-tcp-ratehalving §4.3-4.8): it starts on the first SACK block showing a new hole, not at DupThresh, so one segment goes out per two delivered from the first duplicate ACK; rhcwnd loses half of snd.fack's advance and half of each new hole, data goes out while snd.nxt - snd.fack + retran_data + len <= rhcwnd, never below max(rhcwnd at the start / 4, 1 segment) before recovery; the retransmission still waits for DupThresh; reordering restores the window. Off by default (the Linux 2.4 form, from DupThresh)"`
}

// RateHalvingMaxBurst is the burst bound of draft-mathis-tcp-ratehalving
// (cwnd <= pipe + 1 segment), segments.
const RateHalvingMaxBurst = 1

// Name returns "ratehalving".
func (r *RateHalving) Name() string { return "ratehalving" }

// Window returns rhcwnd during recovery (with option draft during the
// adjustment interval), bytes (0 otherwise).
func (r *RateHalving) Window() int {
	if !r.inRec && !r.adj {
		return 0
	}
	return r.win
}

// OnAck reduces the window by half of the data delivered.
func (r *RateHalving) OnAck(x *Ctx, a *AckInfo) {
	if r.draft {
		r.draftOnAck(x, a)
		return
	}
	if r.update(x, a) {
		r.enter(x) // startEpisode runs at its end
		return
	}
	if !r.inRec {
		return
	}
	d := r.carry + a.AckedBytes + a.SackedBytes
	r.win -= d / 2
	r.carry = d % 2
	r.bound(x)
}

// startEpisode sets rhcwnd at the start of an episode: the window at the
// time of the loss, min(cwnd, FlightSize), bounded; sackLoss.enter calls it.
func (r *RateHalving) startEpisode(x *Ctx) {
	if r.adj {
		r.bound(x) // option draft: the adjustment interval began earlier and goes on
		return
	}
	r.win = min(x.CC.Cwnd(), x.SB.FlightSize())
	r.carry = 0
	if r.draft {
		r.adj, r.adjRtx, r.prior = true, false, r.win // no SACK block before DupThresh
	}
	r.bound(x)
}

// bound applies the two bounding rules (with option draft before recovery
// the floor draftFloor instead of ssthresh).
func (r *RateHalving) bound(x *Ctx) {
	if !r.draft {
		r.win = max(r.win, x.CC.Ssthresh())
		r.win = min(r.win, r.Pipe(x.SB)+r.maxBurst*r.mss)
		return
	}
	if r.inRec {
		r.win = max(r.win, x.CC.Ssthresh())
	} else {
		r.win = max(r.win, r.draftFloor())
	}
	r.win = min(r.win, r.Pipe(x.SB)+r.maxBurst*r.mss)
}

// Next sends while pipe < rhcwnd.
func (r *RateHalving) Next(x *Ctx) Action {
	if r.draft && (r.adj || r.inRec) {
		return r.draftNext(x)
	}
	if !r.inRec {
		return r.normal(x)
	}
	if act, ok := r.fastRetransmit(x); ok {
		return act
	}
	allow := r.win - r.Pipe(x.SB)
	if allow <= 0 {
		return NoSend
	}
	return r.nextSeg(x, max(allow, r.mss))
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name: "ratehalving",
		Doc:  "Rate-Halving, draft-mathis-tcp-ratehalving 1999 (one segment per two delivered, bounded at ssthresh and pipe+maxburst), RFC 6675 loss detection; options lostretx, draft (the adjustment interval from the first SACK block)",
		Defaults: func() any {
			return &RateHalvingConfig{SACKConfig: SACKConfig{DupThresh: DupThresh, TLP: true}, MaxBurst: RateHalvingMaxBurst}
		},
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*RateHalvingConfig)
			r := newStrategy[RateHalving](env)
			r.maxBurst = c.MaxBurst
			r.draft = c.Draft
			if err := r.init("ratehalving", c.SACKConfig, env, r); err != nil {
				return nil, err
			}
			if c.MaxBurst < 1 || c.MaxBurst > ccalgo.MaxWindowParam {
				return nil, fmt.Errorf("ratehalving: parameter maxburst=%d: must be 1..%d packets", c.MaxBurst, ccalgo.MaxWindowParam)
			}
			return r, nil
		},
	})
}
