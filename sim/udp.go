package sim

import (
	"encoding/binary"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
	"cclab/traffic"
)

// UDPFlow sends a traffic.DatagramGen's datagrams from Src to Dst as raw UDP
// with a sequence number and send timestamp, and measures loss and one-way
// delay at Dst.
type UDPFlow struct {
	Name     string
	Src, Dst *Node
	Port     uint16
	Gen      traffic.DatagramGen
	Stats    traffic.UDPStats
	// Sink, if set, receives a PacketSent event for every datagram sent
	// and a Delivered event for every datagram received, with Event.Flow
	// = Flow, so the flow is measured like a transport's (metrics.Collector).
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
	size := max(f.size, traffic.UDPHeaderLen)
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

// FlowKey is the qdisc flow key (qdisc.Packet.Flow, event.Event.Flow of
// link events) of packets from node src to node dst on destination port
// port: a stand-in for the 5-tuple hash a router would compute.
func FlowKey(src, dst int32, port uint16) uint64 { return flowKey(src, dst, port) }

// FlowKeySource returns the source node ID of a flow key made by FlowKey.
func FlowKeySource(k uint64) int32 { return int32(uint32(k >> 40)) }

func flowKey(src, dst int32, port uint16) uint64 {
	return uint64(uint32(src))<<40 | uint64(uint32(dst))<<16 | uint64(port)
}
