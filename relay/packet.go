package relay

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"cclab/clock"
	"cclab/ippkt"
	"cclab/netio"
	"cclab/qdisc"
)

// NewPacket builds a relay in packet mode: it forwards whole IP packets
// between two packet devices (the TUN devices of the link shell,
// docs/shell.md) through the same links, scheduler and statistics as the UDP
// relay. Reads from inner carry the forward direction (Fwd, uplink: from the
// shell's namespace outwards) and writes to inner the reverse one; reads
// from outer carry Rev and writes to outer Fwd. Run starts relaying; Close
// closes both devices.
//
// What differs from New, all of it read from the IP header (package ippkt):
// a packet's size on the links is its IP length plus Config.Overhead
// (auto = 0: the packet already is what the link carries); its flow key is
// its IPv4/IPv6 5-tuple (qdisc.FlowKey5, or the destination connection ID of
// a cclab datagram with Config.ClassifyCID); a queue's CE mark is written
// into the departing packet's ECN field (IPv4 checksum updated); per-flow
// statistics are per 5-tuple and direction; the capture files hold the
// packets as they are. Config.Listen, Target, Network, Entries and
// MaxClients do not apply (Entries is refused);
// ClientTimeout is how long an idle flow keeps its statistics entry.
// Packets that are not IPv4 or IPv6 are counted (Counters.Malformed) and
// dropped.
func NewPacket(cfg Config, inner, outer netio.Conn) (*Relay, error) {
	if inner == nil || outer == nil {
		return nil, fmt.Errorf("relay: NewPacket needs two packet devices")
	}
	r, err := build(cfg, 0, true)
	if err != nil {
		return nil, err
	}
	for _, d := range []struct {
		what string
		conn netio.Conn
	}{{"the inner device", inner}, {"the outer device", outer}} {
		if err := r.checkPoll(d.what, d.conn); err != nil {
			r.discard()
			return nil, err
		}
	}
	r.ln = inner
	r.lnOut = make([][]netio.Message, 1)
	r.lnPkts = make([][]*qdisc.Packet, 1)
	r.lnGSO = make([]*netio.GSOWriter, 1) // devices, not UDP sockets: plain batches
	r.fixed = &client{up: outer, entry: -1, last: [2]int{len(r.paths[Fwd]) - 1, len(r.paths[Rev]) - 1}}
	r.byIdx = append(r.byIdx, r.fixed)
	r.flows.m = map[uint64]*ipFlow{}
	return r, nil
}

// MaxFlows is the number of flows a packet-mode relay keeps per-flow
// statistics for at once; packets of further flows are relayed alike but
// appear only in the hop statistics.
const MaxFlows = 4096

// ipFlow is one flow's statistics entry in packet mode.
type ipFlow struct {
	key      uint64
	dir      int
	src, dst netip.AddrPort
	proto    uint8
	lastSeen clock.Time
	fs       flowStats
}

// flowTable holds the packet-mode flows in the order they appeared.
type flowTable struct {
	m     map[uint64]*ipFlow
	order []*ipFlow
	free  []*ipFlow
	seen  int64 // flows ever tracked
}

// classify parses IP packet b read in direction dir at now and returns its
// flow key, updating the flow table; ok is false if b is not an IPv4 or
// IPv6 packet. Called with mu held.
func (r *Relay) classify(b []byte, dir int, now clock.Time) (key uint64, ok bool) {
	in, err := ippkt.Parse(b)
	if err != nil {
		return 0, false
	}
	key = in.FlowKey()
	if r.cfg.ClassifyCID {
		if pl, ok := in.Payload(b); ok {
			if k, ok := cidFlow(pl); ok {
				key = k
			}
		}
	}
	f := r.flows.m[key]
	if f == nil {
		if len(r.flows.m) >= MaxFlows {
			return key, true
		}
		if f, ok = pop(&r.flows.free); !ok {
			f = &ipFlow{}
		}
		*f = ipFlow{key: key, dir: dir, src: in.Source(), dst: in.Destination(), proto: in.Proto}
		r.flows.m[key] = f
		r.flows.order = append(r.flows.order, f)
		r.flows.seen++
	}
	f.lastSeen = now
	return key, true
}

// outputPacket does the packet-mode part of output: the queue's ECN
// verdict into the IP header, the capture, the flow's departure. Called
// with mu held.
func (r *Relay) outputPacket(p *qdisc.Packet, at clock.Time) {
	ippkt.SetECN(p.Buf, p.ECN)
	r.pcapOut.writeRaw(r.wall(at), p.Buf)
	if f := r.flows.m[p.Flow]; f != nil {
		f.fs.departures++
		f.fs.bytes += int64(p.Size)
	}
}

// droppedPacket does the packet-mode part of dropped. Called with mu held.
func (r *Relay) droppedPacket(h *hop, p *qdisc.Packet) {
	if f := r.flows.m[p.Flow]; f != nil {
		f.fs.drops++
	}
	r.pcapDrop.writeRaw(r.wall(h.lastDropAt), p.Buf)
}

// lines appends a statistics line for every flow with departures in the
// interval iv.
func (t *flowTable) lines(out []FlowLine, iv time.Duration) []FlowLine {
	for _, f := range t.order {
		fs := &f.fs
		n, b := fs.departures-fs.prevDepartures, fs.bytes-fs.prevBytes
		fs.prevDepartures, fs.prevBytes = fs.departures, fs.bytes
		if n == 0 {
			continue
		}
		out = append(out, FlowLine{Flow: fmt.Sprintf("%016x", f.key), Src: f.src.String(), Dst: f.dst.String(),
			Proto: protoName(f.proto), Dir: dirNames[f.dir], Departures: n, Bytes: b, Rate: float64(b) * 8 / iv.Seconds()})
	}
	return out
}

// expire forgets the flows idle for timeout whose departures have all been
// reported.
func (t *flowTable) expire(now clock.Time, timeout time.Duration) {
	keep := t.order[:0]
	for _, f := range t.order {
		if now.Sub(f.lastSeen) >= timeout && f.fs.departures == f.fs.prevDepartures {
			delete(t.m, f.key)
			t.free = append(t.free, f)
			continue
		}
		keep = append(keep, f)
	}
	clear(t.order[len(keep):])
	t.order = keep
}

// protoName names an IP protocol number in statistics.
func protoName(p uint8) string {
	switch p {
	case ippkt.ProtoTCP:
		return "tcp"
	case ippkt.ProtoUDP:
		return "udp"
	case ippkt.ProtoICMP:
		return "icmp"
	case ippkt.ProtoICMPv6:
		return "ipv6-icmp"
	case ippkt.ProtoDCCP:
		return "dccp"
	case ippkt.ProtoSCTP:
		return "sctp"
	case ippkt.ProtoUDPLite:
		return "udplite"
	}
	return strconv.Itoa(int(p))
}
