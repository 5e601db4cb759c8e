package sim

import (
	"encoding/binary"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
	"cclab/traffic"
)

// UDPHeaderLen is the length of the sequence number and send timestamp a
// raw UDP flow writes at the start of each datagram, bytes.
const UDPHeaderLen = 16

// UDPStats are a raw UDP flow's counters.
type UDPStats struct {
	Sent, SentBytes            int64         // datagrams and payload bytes sent
	Received, RecvBytes        int64         // datagrams and payload bytes received
	Lost                       int64         // datagrams missing at the receiver (sequence gaps; reordering counts as loss then recovery)
	DelaySum, DelayMax         time.Duration // one-way delay, sum and max over received datagrams
	First, Last                clock.Time    // first and last send instants
	FirstRecv, LastRecv        clock.Time    // first and last receive instants
	FeedbackRecv, FeedbackLost int           // counts since the last feedback report (layered)
	LastFeedback               clock.Time    // time of the previous feedback report (layered)
}

// UDPFlow sends a traffic.DatagramGen's datagrams from Src to Dst as raw UDP
// with a sequence number and send timestamp, and measures loss and one-way
// delay at Dst.
type UDPFlow struct {
	Name     string
	Src, Dst *Node
	Port     uint16
	Gen      traffic.DatagramGen
	Stats    UDPStats
	// Sink, if set, receives a PacketSent event for every datagram sent
	// and a Delivered event for every datagram received, with Event.Flow
	// = Flow, so the flow is measured like a transport's (eval.Collector).
	Sink event.Sink
	Flow uint64

	ev    event.Event // the event given to Sink (it takes a pointer)
	net   *Network
	timer Timer
	next  clock.Time
	size  int
	seq   uint64
	fb    traffic.FeedbackGen
	done  bool
}

// FeedbackEvery is how many received-or-lost datagrams a layered receiver
// accumulates before reporting to its generator; it also reports on the
// first arrival FeedbackInterval after its previous report (slow layers).
const FeedbackEvery = 20

// FeedbackInterval bounds the time between a layered receiver's reports
// while datagrams arrive.
const FeedbackInterval = 500 * time.Millisecond

// AddUDPFlow attaches gen as a raw UDP flow from src to dst (destination
// port port) starting at start.
func (s *Sim) AddUDPFlow(name string, src, dst *Node, port uint16, gen traffic.DatagramGen, start clock.Time) *UDPFlow {
	f := &UDPFlow{Name: name, Src: src, Dst: dst, Port: port, Gen: gen, net: s.Net}
	f.fb, _ = gen.(traffic.FeedbackGen)
	s.E.InitTimer(&f.timer, f, 0)
	s.stack(dst).udp[port] = f
	s.UDP = append(s.UDP, f)
	f.next, f.size = gen.NextDatagram(start)
	if f.next == clock.Never {
		f.done = true
	} else {
		f.timer.Set(f.next)
	}
	return f
}

// Stop ends the flow: no datagram is sent after now.
func (f *UDPFlow) Stop(clock.Time) {
	f.done = true
	f.timer.Set(clock.Never)
}

// Fire sends the due datagram and schedules the next.
func (f *UDPFlow) Fire(now clock.Time, _ uint64) {
	p := f.net.pool.Get()
	size := max(f.size, UDPHeaderLen)
	p.Buf = p.Buf[:min(size, cap(p.Buf))]
	binary.BigEndian.PutUint64(p.Buf[0:], f.seq)
	binary.BigEndian.PutUint64(p.Buf[8:], uint64(now))
	p.Size = size + f.net.Overhead
	p.Flow = flowKey(f.Src.ID, f.Dst.ID, f.Port)
	m := f.net.pool.Meta(p)
	*m = Meta{Src: f.Src.ID, Dst: f.Dst.ID, SrcPort: f.Port, DstPort: f.Port, Sent: now, Seq: f.seq}
	f.seq++
	if f.Stats.First == clock.Never {
		f.Stats.First = now
	}
	f.Stats.Last = now
	f.Stats.Sent++
	f.Stats.SentBytes += int64(size)
	if f.Sink != nil {
		f.ev = event.Event{Time: now, Kind: event.PacketSent, Flow: f.Flow, Link: -1, Seq: m.Seq, Bytes: size}
		f.Sink.Record(&f.ev)
	}
	f.net.Send(now, f.Src, p)
	f.next, f.size = f.Gen.NextDatagram(now)
	if f.next == clock.Never {
		f.done = true
		return
	}
	f.timer.Set(f.next)
}

// receive accounts one arriving datagram at the destination.
func (f *UDPFlow) receive(now clock.Time, p *qdisc.Packet, m *Meta) {
	f.Stats.Receive(now, m.Seq, len(p.Buf), m.Sent, f.fb)
	if f.Sink != nil {
		f.ev = event.Event{Time: now, Kind: event.Delivered, Flow: f.Flow, Link: -1, Seq: m.Seq, Bytes: len(p.Buf)}
		f.Sink.Record(&f.ev)
	}
}

// Receive accounts one datagram of a raw UDP flow arriving at now: its
// sequence number seq (gaps count as lost), payload bytes and send time
// sent (one-way delay); with a feedback generator fb (layered), it reports
// the datagrams received and lost every FeedbackEvery of them or on the
// first arrival FeedbackInterval after the previous report. Both backends'
// receivers use it (sim.UDPFlow, eval/liverun).
func (st *UDPStats) Receive(now clock.Time, seq uint64, bytes int, sent clock.Time, fb traffic.FeedbackGen) {
	expected := uint64(st.Received + st.Lost)
	if seq > expected {
		gap := int64(seq - expected)
		st.Lost += gap
		st.FeedbackLost += int(gap)
	} else if seq < expected && st.Lost > 0 {
		st.Lost-- // late (reordered) arrival of one counted as lost
	}
	st.Received++
	st.FeedbackRecv++
	st.RecvBytes += int64(bytes)
	d := now.Sub(sent)
	st.DelaySum += d
	st.DelayMax = max(st.DelayMax, d)
	if st.FirstRecv == clock.Never {
		st.FirstRecv = now
	}
	st.LastRecv = now
	if fb != nil && (st.FeedbackRecv+st.FeedbackLost >= FeedbackEvery || now.Sub(st.LastFeedback) >= FeedbackInterval) {
		fb.Feedback(now, st.FeedbackRecv, st.FeedbackLost)
		st.FeedbackRecv, st.FeedbackLost = 0, 0
		st.LastFeedback = now
	}
}

// FlowKey is the qdisc flow key (qdisc.Packet.Flow, event.Event.Flow of
// link events) of packets from node src to node dst on destination port
// port: a stand-in for the 5-tuple hash a router would compute.
func FlowKey(src, dst int32, port uint16) uint64 { return flowKey(src, dst, port) }

// FlowKeySource returns the source node ID of a flow key made by FlowKey.
func FlowKeySource(k uint64) int32 { return int32(uint32(k >> 40)) }

func flowKey(src, dst int32, port uint16) uint64 {
	return uint64(uint32(src))<<40 | uint64(uint32(dst))<<16 | uint64(port)
}
