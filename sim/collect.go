package sim

import (
	"encoding/binary"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/transport"
)

// FlowAcc accumulates one stream flow's metrics from its connections'
// events (DESIGN §7: metrics come from the shared event vocabulary, so a
// sim metric means what the live one means).
type FlowAcc struct {
	// latest state (sender side MetricsUpdated)
	Cwnd, Ssthresh, InFlight int           // bytes
	SRTT, RTT, MinRTT        time.Duration // smoothed, latest sample, minimum
	// sums over the measurement window (after warm-up)
	SRTTSum      time.Duration // sum of SRTT over MetricsUpdated events
	SRTTN        int64         // number of those events
	CwndSum      float64       // sum of Cwnd over MetricsUpdated events, bytes
	Delivered    int64         // bytes delivered in order to the receiving application (in the window)
	DeliveredAll int64         // bytes delivered since the start of the run
	Sent         int64         // data packets sent (including retransmissions)
	SentBytes    int64         // data bytes sent (including retransmissions)
	Retrans      int64         // retransmissions
	Lost         int64         // packets declared lost
	RTOs         int64         // retransmission timeouts
	Spurious     int64         // spurious retransmissions
	Marks        int64         // congestion signals (ECN / delay) that reduced the window
}

// Collector turns events into per-flow accumulators, an optional trace
// hash, and optional time series. Give Sender() as the Config.Sink of the
// flows' connections and Receiver() as the endpoints' sink (Sim does this).
type Collector struct {
	Flows   []FlowAcc
	flowOf  map[uint64]int32 // connection ID → flow index
	measure clock.Time       // start of the measurement window (after warm-up)

	hashOn bool
	hash   uint64
	buf    [96]byte
	events uint64
}

// NewCollector returns a collector for n flows whose measurement window
// starts at measure (events before it update state but not the sums).
func NewCollector(n int, measure clock.Time) *Collector {
	return &Collector{Flows: make([]FlowAcc, n), flowOf: map[uint64]int32{}, measure: measure, hash: fnvOffset}
}

// EnableHash makes the collector hash every event it sees (FNV-1a 64 over a
// fixed binary encoding), for determinism checks.
func (c *Collector) EnableHash() { c.hashOn = true }

// Hash returns the hash of all events seen (if enabled) and their count.
func (c *Collector) Hash() (uint64, uint64) { return c.hash, c.events }

// Bind maps connection id to flow index i.
func (c *Collector) Bind(id uint64, i int) { c.flowOf[id] = int32(i) }

// Sender returns the sink for the sending side of connections.
func (c *Collector) Sender() event.Sink { return (*senderSink)(c) }

// Receiver returns the sink for endpoints (accepted, receiving connections).
func (c *Collector) Receiver() event.Sink { return (*receiverSink)(c) }

// Links returns the sink for link and queue events (only hashed).
func (c *Collector) Links() event.Sink { return (*linkSink)(c) }

type senderSink Collector
type receiverSink Collector
type linkSink Collector

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (c *Collector) hashEvent(e *event.Event, side byte) {
	c.events++
	if !c.hashOn {
		return
	}
	b := c.buf[:]
	b[0] = side
	b[1] = byte(e.Kind)
	b[2] = e.Reason
	b[3] = 0
	binary.LittleEndian.PutUint32(b[4:], uint32(e.Link))
	binary.LittleEndian.PutUint64(b[8:], uint64(e.Time))
	binary.LittleEndian.PutUint64(b[16:], e.Flow)
	binary.LittleEndian.PutUint64(b[24:], e.Seq)
	binary.LittleEndian.PutUint64(b[32:], uint64(e.Bytes))
	binary.LittleEndian.PutUint64(b[40:], uint64(e.Cwnd))
	binary.LittleEndian.PutUint64(b[48:], uint64(e.InFlight))
	binary.LittleEndian.PutUint64(b[56:], uint64(e.SRTT))
	binary.LittleEndian.PutUint64(b[64:], uint64(e.RTT))
	binary.LittleEndian.PutUint64(b[72:], uint64(e.QueueLen))
	binary.LittleEndian.PutUint64(b[80:], uint64(e.Sojourn))
	binary.LittleEndian.PutUint64(b[88:], uint64(e.Ssthresh))
	h := c.hash
	for _, x := range b {
		h ^= uint64(x)
		h *= fnvPrime
	}
	c.hash = h
}

func (c *Collector) flow(id uint64) *FlowAcc {
	i, ok := c.flowOf[id]
	if !ok {
		return nil
	}
	return &c.Flows[i]
}

// Record implements event.Sink for the sending side.
func (s *senderSink) Record(e event.Event) {
	c := (*Collector)(s)
	c.hashEvent(&e, 's')
	if f := c.flow(e.Flow); f != nil {
		c.senderRecord(f, &e)
	}
}

// FlowSink returns the sending-side sink of stream flow i: Sender() without
// the connection lookup.
func (c *Collector) FlowSink(i int) event.Sink {
	for len(c.Flows) <= i {
		c.Flows = append(c.Flows, FlowAcc{})
	}
	return &flowSink{c: c, i: i}
}

type flowSink struct {
	c *Collector
	i int
}

// Record implements event.Sink.
func (s *flowSink) Record(e event.Event) {
	s.c.hashEvent(&e, 's')
	s.c.senderRecord(&s.c.Flows[s.i], &e)
}

func (c *Collector) senderRecord(f *FlowAcc, e *event.Event) {
	in := e.Time >= c.measure
	switch e.Kind {
	case event.MetricsUpdated:
		f.Cwnd, f.Ssthresh, f.InFlight = e.Cwnd, e.Ssthresh, e.InFlight
		f.SRTT, f.RTT, f.MinRTT = e.SRTT, e.RTT, e.MinRTT
		if in && e.SRTT > 0 {
			f.SRTTSum += e.SRTT
			f.SRTTN++
			f.CwndSum += float64(e.Cwnd)
		}
	case event.PacketSent:
		if in {
			f.Sent++
			f.SentBytes += int64(e.Bytes)
		}
	case event.Retransmit:
		if in {
			f.Retrans++
		}
	case event.PacketLost:
		if in {
			f.Lost++
		}
	case event.RTO:
		if in {
			f.RTOs++
		}
	case event.SpuriousRetransmit:
		if in {
			f.Spurious++
		}
	case event.CongestionSignal:
		if in {
			f.Marks++
		}
	}
}

// Record implements event.Sink for the receiving side.
func (s *receiverSink) Record(e event.Event) {
	c := (*Collector)(s)
	c.hashEvent(&e, 'r')
	if e.Kind != event.Delivered {
		return
	}
	if f := c.flow(e.Flow); f != nil {
		f.DeliveredAll += int64(e.Bytes)
		if e.Time >= c.measure {
			f.Delivered += int64(e.Bytes)
		}
	}
}

// Record implements event.Sink for links.
func (s *linkSink) Record(e event.Event) {
	(*Collector)(s).hashEvent(&e, 'l')
}

// Attach wires the collector into s: every TCP flow added afterwards reports
// to it (its conns get FlowSink(index) as sink and are bound to the flow index),
// and endpoints report to Receiver(). Call before adding flows.
func (c *Collector) Attach(s *Sim) {
	s.Sink = c.Receiver()
	s.Transport.Sink = c.Sender()
	s.flowSink = c.FlowSink
	s.onConn = func(f *TCPFlow, conn *transport.Conn) {
		for len(c.Flows) <= f.Index {
			c.Flows = append(c.Flows, FlowAcc{})
		}
		c.Bind(conn.ID(), f.Index)
	}
}
