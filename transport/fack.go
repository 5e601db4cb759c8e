package transport

import "cclab/internal/spec"

// FACK is Forward Acknowledgment (M. Mathis and J. Mahdavi, "Forward
// Acknowledgment: Refining TCP Congestion Control", SIGCOMM 1996). The
// forward-most SACKed byte snd.fack drives both loss detection and the
// estimate of data in the network:
//
//	awnd = snd.nxt - snd.fack + retran_data
//
// where retran_data is the retransmitted data still outstanding (sent in this
// episode, neither SACKed nor detected lost again). Recovery is triggered when
// snd.fack - snd.una > 3*MSS (DupThresh*MSS) or on the third duplicate ACK;
// the window is halved at once (cwnd = ssthresh from the controller) and data
// is sent while awnd < cwnd: retransmissions of the holes more than
// DupThresh*MSS below snd.fack first, then new data. Recovery ends when
// snd.una reaches the snd.nxt recorded at its start.
//
// Option lostretx adds lost-retransmission detection (lostretx.go).
type FACK struct {
	sackLoss
}

// Name returns "fack".
func (r *FACK) Name() string { return "fack" }

// OnAck updates loss marks and enters or leaves recovery.
func (r *FACK) OnAck(x *Ctx, a *AckInfo) {
	if r.update(x, a) {
		r.enter(x)
	}
}

// Fack returns snd.fack: the forward-most byte known to have reached the
// receiver (the highest SACKed byte, or snd.una if higher), bytes.
func Fack(sb *Scoreboard) uint64 { return max(sb.HighSacked(), sb.Una()) }

// RetranData returns FACK's retran_data (also Rate-Halving's, draft §2):
// payload bytes retransmitted in the current episode that are below
// snd.fack, not SACKed and not marked lost again.
func (r *sackLoss) RetranData(sb *Scoreboard) int {
	fack := Fack(sb)
	n := 0
	for i := 0; i < sb.Count(); i++ {
		s := sb.Seg(i)
		if s.Off >= fack {
			break
		}
		if s.Retrans > 0 && s.SendSeq > r.epochSeq && !s.Sacked && !s.Lost {
			n += s.Len
		}
	}
	return n
}

// Awnd returns FACK's estimate of the data in the network (also
// Rate-Halving's outstanding data, draft §4.3), bytes: snd.nxt - snd.fack +
// retran_data.
func (r *sackLoss) Awnd(sb *Scoreboard) int {
	return int(sb.Nxt()-min(Fack(sb), sb.Nxt())) + r.RetranData(sb)
}

// Next sends while awnd < cwnd during recovery (cwnd = ssthresh).
func (r *FACK) Next(x *Ctx) Action {
	if !r.inRec {
		return r.normal(x)
	}
	if act, ok := r.fastRetransmit(x); ok {
		return act
	}
	allow := x.CC.Ssthresh() - r.Awnd(x.SB)
	if allow <= 0 {
		return NoSend
	}
	// "while awnd < cwnd" sends a whole segment even if less than one
	// segment of window is left.
	return r.nextSeg(x, max(allow, r.mss))
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "fack",
		Doc:      "Forward Acknowledgment, Mathis & Mahdavi 1996 (snd.fack drives loss detection and awnd); option lostretx",
		Defaults: func() any { return &SACKConfig{DupThresh: DupThresh, TLP: true} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			r := newStrategy[FACK](env)
			if err := r.init("fack", *cfg.(*SACKConfig), env, nil); err != nil {
				return nil, err
			}
			r.fackRule = true
			return r, nil
		},
	})
}
