package sim

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"cclab/clock"
	"cclab/link"
)

// FlowPoint is one sample of a stream flow's state.
type FlowPoint struct {
	T          float64 // seconds since the start of the run
	Cwnd       int     // bytes
	InFlight   int     // bytes
	SRTT       float64 // ms
	Throughput float64 // goodput over the last interval, bits/s
}

// LinkPoint is one sample of a link's state.
type LinkPoint struct {
	T           float64 // seconds since the start of the run
	QueueLen    int     // packets
	QueueBytes  int     // bytes
	QueueDelay  float64 // mean sojourn of packets dequeued in the interval, ms
	Drops       int64   // in the interval
	Marks       int64   // in the interval
	Utilization float64 // busy fraction of the interval (service time is credited when a packet completes, so one interval may exceed 1 by a packet time)
	Throughput  float64 // departures over the interval, bits/s
}

// Sampler records per-flow and per-link time series at a fixed interval
// (DESIGN §7).
type Sampler struct {
	Interval time.Duration
	Flows    [][]FlowPoint // by stream flow index
	Links    [][]LinkPoint // by Run.Links index
	run      *Run
	start    clock.Time
	lastDel  []int64
	lastLink []link.Stats
	timer    Timer
}

// Sample starts time series at interval for r's flows and links.
func (r *Run) Sample(interval time.Duration) *Sampler {
	s := &Sampler{Interval: interval, run: r, start: r.start}
	r.Series = s
	s.lastLink = make([]link.Stats, len(r.Links))
	s.Links = make([][]LinkPoint, len(r.Links))
	r.Sim.E.InitTimer(&s.timer, s, 0)
	s.timer.Set(r.start.Add(interval))
	return s
}

// Fire takes one sample.
func (s *Sampler) Fire(now clock.Time, _ uint64) {
	t := now.Sub(s.start).Seconds()
	dt := s.Interval.Seconds()
	col := s.run.Col
	for len(s.Flows) < len(col.Flows) {
		s.Flows = append(s.Flows, nil)
		s.lastDel = append(s.lastDel, 0)
	}
	for i := range col.Flows {
		f := &col.Flows[i]
		s.Flows[i] = append(s.Flows[i], FlowPoint{T: t, Cwnd: f.Cwnd, InFlight: f.InFlight, SRTT: ms(f.SRTT),
			Throughput: float64(f.DeliveredAll-s.lastDel[i]) * 8 / dt})
		s.lastDel[i] = f.DeliveredAll
	}
	for i, l := range s.run.Links {
		a, b := s.lastLink[i], l.Stats()
		p := LinkPoint{T: t, QueueLen: b.QueueLen, QueueBytes: b.QueueBytes,
			Drops: b.TotalDrops() - a.TotalDrops(), Marks: b.Marks - a.Marks,
			Utilization: (b.BusyTime - a.BusyTime).Seconds() / dt,
			Throughput:  float64(b.DepartureBytes-a.DepartureBytes) * 8 / dt}
		if n := b.Dequeues - a.Dequeues; n > 0 {
			p.QueueDelay = ms(b.QueueDelaySum-a.QueueDelaySum) / float64(n)
		}
		s.Links[i] = append(s.Links[i], p)
		s.lastLink[i] = b
	}
	s.timer.Set(now.Add(s.Interval))
}

// WriteCSV writes the series in long format: one row per (time, kind, name).
func (s *Sampler) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "t_s,kind,name,cwnd_bytes,inflight_bytes,srtt_ms,throughput_bps,queue_pkts,queue_bytes,queue_delay_ms,drops,marks,utilization")
	for i, pts := range s.Flows {
		name := fmt.Sprint(i)
		if i < len(s.run.Sim.TCP) {
			name = s.run.Sim.TCP[i].Name
		}
		for _, p := range pts {
			fmt.Fprintf(bw, "%.6f,flow,%s,%d,%d,%.3f,%.0f,,,,,,\n", p.T, name, p.Cwnd, p.InFlight, p.SRTT, p.Throughput)
		}
	}
	for i, pts := range s.Links {
		name := s.run.Links[i].Name
		for _, p := range pts {
			fmt.Fprintf(bw, "%.6f,link,%s,,,,%.0f,%d,%d,%.3f,%d,%d,%.4f\n", p.T, name, p.Throughput, p.QueueLen,
				p.QueueBytes, p.QueueDelay, p.Drops, p.Marks, p.Utilization)
		}
	}
	return bw.Flush()
}
