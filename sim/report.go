package sim

import (
	"fmt"
	"io"
	"math"
	"time"

	"cclab/clock"
	"cclab/link"
)

// FlowSummary is one stream flow's result over the measurement window.
// Names follow DESIGN §7 (mean_x per flow); units are in the JSON keys.
type FlowSummary struct {
	Name         string  `json:"name"`
	CC           string  `json:"cc"`
	BaseRTTms    float64 `json:"base_rtt_ms"`
	Throughput   float64 `json:"mean_throughput_bps"` // goodput at the receiver, bits/s
	SendRate     float64 `json:"mean_send_rate_bps"`  // data sent including retransmissions, bits/s
	MeanSRTTms   float64 `json:"mean_srtt_ms"`        // mean of srtt over ACKs
	MinRTTms     float64 `json:"min_rtt_ms"`
	MeanQDelayms float64 `json:"mean_queueing_delay_ms"` // mean srtt - min RTT
	MeanCwnd     float64 `json:"mean_cwnd_bytes"`        // mean of cwnd over ACKs
	Sent         int64   `json:"total_packets_sent"`
	Retransmits  int64   `json:"total_retransmits"`
	Lost         int64   `json:"total_lost"`
	RTOs         int64   `json:"total_rtos"`
	Signals      int64   `json:"total_congestion_signals"` // ECN echoes (or delay decisions) that reduced the window
	LossRate     float64 `json:"loss_rate"`                // lost / sent
	Transfers    int     `json:"transfers"`
	Completed    int     `json:"completed"`
	MeanFCTs     float64 `json:"mean_fct_s,omitempty"` // completed byte-limited transfers
}

// UDPSummary is one raw UDP flow's result over the whole run.
type UDPSummary struct {
	Name        string  `json:"name"`
	Generator   string  `json:"generator"`
	Throughput  float64 `json:"mean_throughput_bps"` // received payload, bits/s over the run
	Sent        int64   `json:"total_sent"`
	Received    int64   `json:"total_received"`
	LossRate    float64 `json:"loss_rate"`
	MeanDelayms float64 `json:"mean_owd_ms"`
	MaxDelayms  float64 `json:"max_owd_ms"`
}

// LinkSummary is one link direction's result over the measurement window.
type LinkSummary struct {
	Name         string  `json:"name"`
	Rate         float64 `json:"rate_bps"`
	Utilization  float64 `json:"utilization"`         // busy fraction of the window
	Throughput   float64 `json:"throughput_bps"`      // bytes departed, bits/s
	Arrivals     int64   `json:"total_arrivals"`      // packets offered
	Drops        int64   `json:"total_drops"`         // all reasons
	Marks        int64   `json:"total_marks"`         // CE marks
	DropRate     float64 `json:"drop_rate"`           // drops / arrivals
	MeanQDelayms float64 `json:"mean_queue_delay_ms"` // mean sojourn of dequeued packets
	MaxQDelayms  float64 `json:"max_queue_delay_ms"`  // over the whole run
	MeanQueueLen float64 `json:"mean_queue_len_pkts"` // time average (Little: arrival rate × delay)
}

// Summary is a run's result.
type Summary struct {
	Seed          uint64        `json:"seed"`
	Duration      float64       `json:"duration_s"`
	Warmup        float64       `json:"warmup_s"`
	Flows         []FlowSummary `json:"flows"`
	UDP           []UDPSummary  `json:"udp,omitempty"`
	Links         []LinkSummary `json:"links"`
	AggThroughput float64       `json:"agg_throughput_bps"`
	Jain          float64       `json:"jain_index"` // over stream flows' throughputs
	Events        uint64        `json:"sim_events"`
	Verified      int           `json:"transfers_verified"`   // finished connections whose received stream matched the sent one
	Mismatched    int           `json:"transfers_mismatched"` // finished connections whose streams differed (a transport bug)
	TraceHash     string        `json:"trace_hash,omitempty"`
}

// Jain returns Jain's fairness index (Σx)²/(n·Σx²) of xs (1 for an empty or all-zero set).
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}

// Run ties a Sim, its Collector and the links to report together and
// produces a Summary.
type Run struct {
	Sim       *Sim
	Col       *Collector
	Links     []*Link         // links to summarize
	BaseRTT   []time.Duration // per stream flow, for the report
	Warmup    time.Duration   // measurement starts Warmup after clock.Start
	start     clock.Time
	snap      []link.Stats // link stats at the end of warm-up
	snapTaken bool
	Series    *Sampler
	end       clock.Time                   // end of a Scenario run
	untilDone bool                         // stop when every stream flow has finished
	closers   []interface{ Close() error } // qlog writers
}

// NewRun prepares a run on s measuring after warmup, with col (nil: a new
// collector; pass one to have built the network with col.Links() as its
// sink, for trace hashing); call before adding flows.
func NewRun(s *Sim, col *Collector, warmup time.Duration, links []*Link) *Run {
	r := &Run{Sim: s, Links: links, Warmup: warmup, start: s.E.Now()}
	if col == nil {
		col = NewCollector(0, r.start.Add(warmup))
	}
	col.measure = r.start.Add(warmup)
	r.Col = col
	r.Col.Attach(s)
	s.E.Schedule(r.start.Add(warmup), HandlerFunc(func(now clock.Time, _ uint64) { r.snapshot() }), 0)
	return r
}

func (r *Run) snapshot() {
	r.snap = make([]link.Stats, len(r.Links))
	for i, l := range r.Links {
		r.snap[i] = l.Stats()
	}
	r.snapTaken = true
}

// Summary summarizes the run so far.
func (r *Run) Summary() Summary {
	s := r.Sim
	now := s.E.Now()
	if !r.snapTaken {
		r.snapshot() // warm-up longer than the run: measure nothing
	}
	win := now.Sub(r.start.Add(r.Warmup)).Seconds()
	if win <= 0 {
		win = math.NaN()
	}
	out := Summary{Seed: s.Net.Seed, Duration: now.Sub(r.start).Seconds(), Warmup: r.Warmup.Seconds()}
	var thr []float64
	for i, f := range s.TCP {
		var a FlowAcc
		if i < len(r.Col.Flows) {
			a = r.Col.Flows[i]
		}
		fs := FlowSummary{Name: f.Name, CC: f.Config.CC, Throughput: float64(a.Delivered) * 8 / win,
			SendRate: float64(a.SentBytes) * 8 / win, MinRTTms: ms(a.MinRTT),
			Sent: a.Sent, Retransmits: a.Retrans, Lost: a.Lost, RTOs: a.RTOs, Signals: a.Marks,
			Transfers: f.Stats.Transfers, Completed: f.Stats.Completed}
		if fs.CC == "" {
			fs.CC = s.Transport.CC
		}
		if i < len(r.BaseRTT) {
			fs.BaseRTTms = ms(r.BaseRTT[i])
		}
		if a.SRTTN > 0 {
			fs.MeanSRTTms = ms(a.SRTTSum) / float64(a.SRTTN)
			fs.MeanCwnd = a.CwndSum / float64(a.SRTTN)
			fs.MeanQDelayms = fs.MeanSRTTms - fs.MinRTTms
		}
		if a.Sent > 0 {
			fs.LossRate = float64(a.Lost) / float64(a.Sent)
		}
		if f.Stats.Completed > 0 && f.Stats.FCTSum > 0 {
			fs.MeanFCTs = f.Stats.FCTSum.Seconds() / float64(f.Stats.Completed)
		}
		out.Flows = append(out.Flows, fs)
		thr = append(thr, fs.Throughput)
		out.AggThroughput += fs.Throughput
	}
	out.Jain = Jain(thr)
	out.Verified, out.Mismatched = s.Integrity.Verified, s.Integrity.Mismatched
	for _, u := range s.UDP {
		st := u.Stats
		us := UDPSummary{Name: u.Name, Generator: u.Gen.Name(), Sent: st.Sent, Received: st.Received,
			Throughput: float64(st.RecvBytes) * 8 / now.Sub(r.start).Seconds(), MaxDelayms: ms(st.DelayMax)}
		if st.Sent > 0 {
			us.LossRate = float64(st.Sent-st.Received) / float64(st.Sent)
		}
		if st.Received > 0 {
			us.MeanDelayms = ms(st.DelaySum) / float64(st.Received)
		}
		out.UDP = append(out.UDP, us)
	}
	for i, l := range r.Links {
		a, b := r.snap[i], l.Stats()
		ls := LinkSummary{Name: l.Name, Rate: l.Config().Rate,
			Utilization: (b.BusyTime - a.BusyTime).Seconds() / win,
			Throughput:  float64(b.DepartureBytes-a.DepartureBytes) * 8 / win,
			Arrivals:    b.Arrivals - a.Arrivals, Drops: b.TotalDrops() - a.TotalDrops(), Marks: b.Marks - a.Marks,
			MaxQDelayms: ms(b.QueueDelayMax)}
		if ls.Arrivals > 0 {
			ls.DropRate = float64(ls.Drops) / float64(ls.Arrivals)
		}
		if n := b.Dequeues - a.Dequeues; n > 0 {
			d := b.QueueDelaySum - a.QueueDelaySum
			ls.MeanQDelayms = ms(d) / float64(n)
			ls.MeanQueueLen = d.Seconds() / win // Little's law: Σ sojourn / window
		}
		out.Links = append(out.Links, ls)
	}
	h, n := r.Col.Hash()
	out.Events = s.E.Fired()
	if r.Col.hashOn {
		out.TraceHash = fmt.Sprintf("%016x", h)
		_ = n
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// WriteText prints a human-readable summary.
func (s Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "seed %d, %.1f s simulated (%.1f s warm-up), %d events\n", s.Seed, s.Duration, s.Warmup, s.Events)
	if len(s.Flows) > 0 {
		fmt.Fprintf(w, "%-10s %-8s %8s %12s %9s %9s %9s %10s %7s %7s %5s\n",
			"flow", "cc", "baseRTT", "goodput", "srtt", "minrtt", "qdelay", "cwnd", "retx", "loss%", "rto")
		for _, f := range s.Flows {
			fmt.Fprintf(w, "%-10s %-8s %6.1fms %8.3fMbit %7.1fms %7.1fms %7.1fms %10.0f %7d %7.3f %5d\n",
				f.Name, f.CC, f.BaseRTTms, f.Throughput/1e6, f.MeanSRTTms, f.MinRTTms, f.MeanQDelayms, f.MeanCwnd,
				f.Retransmits, 100*f.LossRate, f.RTOs)
		}
		fmt.Fprintf(w, "aggregate goodput %.3f Mbit/s, Jain's index %.4f; finished transfers verified %d, mismatched %d\n",
			s.AggThroughput/1e6, s.Jain, s.Verified, s.Mismatched)
	}
	for _, u := range s.UDP {
		fmt.Fprintf(w, "udp %-10s %-9s %8.3fMbit loss %.3f%% owd mean %.1fms max %.1fms\n",
			u.Name, u.Generator, u.Throughput/1e6, 100*u.LossRate, u.MeanDelayms, u.MaxDelayms)
	}
	for _, l := range s.Links {
		fmt.Fprintf(w, "link %-12s %8.3fMbit util %.4f thr %8.3fMbit drops %d (%.3f%%) marks %d qdelay mean %.2fms max %.2fms qlen %.1f\n",
			l.Name, l.Rate/1e6, l.Utilization, l.Throughput/1e6, l.Drops, 100*l.DropRate, l.Marks,
			l.MeanQDelayms, l.MaxQDelayms, l.MeanQueueLen)
	}
	if s.TraceHash != "" {
		fmt.Fprintf(w, "trace hash %s\n", s.TraceHash)
	}
}
