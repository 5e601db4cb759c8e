package perf

import (
	"sync"
	"time"
)

// RecvInterval is one interval report of a flow at the receiver (receiver
// -i, as iperf3 -s prints them): what the flow did during [Start, End)
// seconds since the receiver accepted it.
type RecvInterval struct {
	Start       float64 `json:"start"`                  // s
	End         float64 `json:"end"`                    // s
	Bytes       int64   `json:"bytes"`                  // stream bytes delivered (forward), sent and acknowledged (reverse), datagram payload delivered (datagram mode)
	BitsPerSec  float64 `json:"bits_per_second"`        // Bytes*8/(End-Start)
	Retransmits int64   `json:"retransmits,omitempty"`  // reverse: retransmitted packets
	Cwnd        int     `json:"cwnd,omitempty"`         // reverse: congestion window at the end, bytes
	SRTTms      float64 `json:"srtt_ms,omitempty"`      // reverse: smoothed RTT at the end, ms
	Datagrams   uint64  `json:"datagrams,omitempty"`    // datagram mode: datagrams delivered
	LostNetwork uint64  `json:"lost_network,omitempty"` // datagram mode: packets lost in the network (gaps in the transport sequence)
	Jitterms    float64 `json:"jitter_ms,omitempty"`    // datagram mode: RFC 3550 interarrival jitter at the end, ms
}

// FlowInterval is an interval report with the flow it belongs to
// (ServerConfig.OnInterval).
type FlowInterval struct {
	ConnID  string // the flow's connection ID, hex (as FlowSummary.ConnID)
	Peer    string // the flow's client
	Reverse bool   // this receiver sent
	Mode    string // ModeDatagram for a datagram-mode flow, "" for a stream
	RecvInterval
}

// flowCounters are a flow's running totals an intervalMeter samples.
type flowCounters struct {
	bytes       int64
	retransmits int64
	cwnd        int
	srtt        time.Duration
	datagrams   uint64
	lost        uint64
	jitter      time.Duration
}

// intervalMeter samples a flow's counters every period on its own
// goroutine, reports each interval and keeps them; a nil meter (no -i)
// does nothing.
type intervalMeter struct {
	period time.Duration
	read   func() flowCounters
	emit   func(RecvInterval) // may be nil
	t0     time.Time
	stop   chan struct{}
	done   chan struct{}

	mu    sync.Mutex
	prev  flowCounters
	prevT float64
	out   []RecvInterval
}

// startIntervals starts a flow's interval meter (nil without
// ServerConfig.Interval); info names the flow in OnInterval's reports.
func (s *Server) startIntervals(info FlowInterval, read func() flowCounters) *intervalMeter {
	if s.cfg.Interval <= 0 {
		return nil
	}
	m := &intervalMeter{period: s.cfg.Interval, read: read, t0: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if s.cfg.OnInterval != nil {
		m.emit = func(iv RecvInterval) {
			fi := info
			fi.RecvInterval = iv
			s.cfg.OnInterval(fi)
		}
	}
	go m.run()
	return m
}

func (m *intervalMeter) run() {
	defer close(m.done)
	tick := time.NewTicker(m.period)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			m.sample()
		case <-m.stop:
			return
		}
	}
}

// sample reports the interval since the last sample.
func (m *intervalMeter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, t := m.read(), time.Since(m.t0).Seconds()
	dt := t - m.prevT
	if dt <= 0 {
		return
	}
	iv := RecvInterval{Start: m.prevT, End: t, Bytes: c.bytes - m.prev.bytes, Retransmits: c.retransmits - m.prev.retransmits,
		Cwnd: c.cwnd, SRTTms: ms(c.srtt), Datagrams: c.datagrams - m.prev.datagrams, LostNetwork: c.lost - m.prev.lost, Jitterms: ms(c.jitter)}
	iv.BitsPerSec = float64(iv.Bytes) * 8 / dt
	m.prev, m.prevT = c, t
	m.out = append(m.out, iv)
	if m.emit != nil {
		m.emit(iv)
	}
}

// finish stops the meter, reports the last (partial) interval, as iperf3
// does, and returns every interval.
func (m *intervalMeter) finish() []RecvInterval {
	if m == nil {
		return nil
	}
	close(m.stop)
	<-m.done
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.out
}
