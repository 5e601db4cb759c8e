package sim

import (
	"fmt"
	"net/netip"
	"unsafe"

	"cclab/clock"
	"cclab/event"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
)

// NodeKind says whether a node is an end host or a router.
type NodeKind uint8

// Node kinds.
const (
	Host NodeKind = iota
	Router
)

// NodeDesc describes one node.
type NodeDesc struct {
	Name string   `json:"name"`
	Kind NodeKind `json:"kind"` // 0 host, 1 router
}

// LinkDesc describes one direction of a link between two nodes.
type LinkDesc struct {
	Name   string      `json:"name"` // unique; names the link and, by default, its random stream
	From   string      `json:"from"`
	To     string      `json:"to"`
	Config link.Config `json:"config"`
	// Stream names the link's random stream (traffic.Stream(seed, Stream));
	// "" means "link/"+Name.
	Stream string `json:"stream,omitempty"`
}

// RouteDesc is an explicit static route: at node At, packets for host Dest
// leave on link Via. Routes not given are computed (fewest hops, ties broken
// by link order).
type RouteDesc struct {
	At   string `json:"at"`
	Dest string `json:"dest"`
	Via  string `json:"via"`
}

// Description is a general topology, usable from scenario files.
type Description struct {
	Nodes  []NodeDesc  `json:"nodes"`
	Links  []LinkDesc  `json:"links"`
	Routes []RouteDesc `json:"routes,omitempty"`
}

// AddNode appends a node and returns its name.
func (d *Description) AddNode(name string, kind NodeKind) string {
	d.Nodes = append(d.Nodes, NodeDesc{Name: name, Kind: kind})
	return name
}

// AddDuplex appends the two directions a→b (fwd) and b→a (rev), named
// "a>b" and "b>a".
func (d *Description) AddDuplex(a, b string, fwd, rev link.Config) {
	d.Links = append(d.Links,
		LinkDesc{Name: a + ">" + b, From: a, To: b, Config: fwd},
		LinkDesc{Name: b + ">" + a, From: b, To: a, Config: rev})
}

// Receiver consumes packets arriving at a host. The packet is recycled when
// Receive returns: a receiver must copy what it keeps.
type Receiver interface {
	Receive(now clock.Time, p *qdisc.Packet)
}

// Node is a host or router of a built Network. The fields every packet
// reads come first (one cache line).
type Node struct {
	ID       int32
	Kind     NodeKind
	defRoute int32    // the only outgoing link (nodes with one link), or -1
	routes   []int32  // by destination node ID: outgoing link ID, -1 if unreachable; nil: use defRoute
	Receiver Receiver // for hosts: who gets arriving packets; nil discards them
	Dropped  int64    // packets discarded here: no route onward, addressed to a router, no receiver for the port, or sent to a non-simulated address
	Name     string
	Addr     netip.Addr // synthetic IPv4 address 10.a.b.c derived from ID
}

// Link is one direction of a link in a built Network. The simulator drives
// it by its DeliveryDeadline: one event per packet, at its arrival at the
// far end; dequeues in between happen at their modelled instants and are
// reported (events, Stats) when the link is next called (docs/sim.md).
type Link struct {
	*link.Link
	To      *Node
	net     *Network
	firing  bool // inside Fire: a re-entrant send goes through the timer
	through bool // link.Link.Transparent: Through may pass packets
	ID      int32
	From    *Node
	Name    string
	timer   Timer
}

// Fire delivers the packets that have reached the far end and re-arms.
func (l *Link) Fire(now clock.Time, _ uint64) {
	l.firing = true
	for {
		p, _ := l.DeliverAt(now)
		if p == nil {
			break
		}
		l.net.arrive(now, l.To, p)
	}
	l.firing = false
	l.timer.Set(l.DeliveryDeadline())
}

// send offers p to the link and re-arms its timer. A link that needs
// control at once (an unlimited-rate, zero-delay access link) is served
// right away instead of through the event queue: the same instants, one
// queue operation less per packet.
func (l *Link) send(now clock.Time, p *qdisc.Packet) {
	l.Link.Send(now, p)
	d := l.DeliveryDeadline()
	if d != clock.Never && d <= now && !l.firing {
		l.Fire(now, 0)
		return
	}
	l.timer.Set(d)
}

// Stats returns the link's counters as of the engine's current instant
// (it runs the link up to now first, see link.Link.Advance).
func (l *Link) Stats() link.Stats {
	l.Link.Advance(l.net.E.Now())
	return l.Link.Stats()
}

// Inject offers cross traffic p directly to the link's queue at now (it
// skips the loss stage, see link.Link.Inject) and re-arms the link's timer.
// p must come from the network's pool; its Meta.Dst is usually the link's
// far end (a router), where the packet leaves the network.
func (l *Link) Inject(now clock.Time, p *qdisc.Packet) {
	l.Link.Inject(now, p)
	l.timer.Set(l.DeliveryDeadline())
}

// Options configure Build.
type Options struct {
	Seed uint64     // scenario seed: every random stream derives from it and a component name
	Sink event.Sink // receives link and queue events; nil discards them
	// Quiet, if set, names links whose events nobody needs (by link ID):
	// they build none (link.Env.Sink nil), which saves work on every
	// packet. Their behaviour does not change.
	Quiet func(id int32) bool
	// BufSize is the capacity of packet buffers, bytes (at least the largest
	// datagram a host sends); 0 means 2048.
	BufSize int
	// PayloadOnly makes a packet's size on links its UDP payload alone, as
	// cmd/bottleneck -overhead 0 counts it; by default link.IPv4UDPOverhead
	// (IPv4 + UDP headers) is added, as cmd/bottleneck does by default.
	PayloadOnly bool
}

// Network is a built topology running on an Engine.
type Network struct {
	E      *Engine
	Nodes  []*Node
	Links  []*Link
	Seed   uint64
	byName map[string]*Node
	links  map[string]*Link
	// Overhead is added to every datagram's length to get its size on links,
	// bytes: link.IPv4UDPOverhead, or 0 with Options.PayloadOnly.
	Overhead int
	pool     Pool
	spare    *qdisc.Packet // a packet from the pool kept for the next Transmit (most calls send nothing)
}

// Build instantiates d on engine e.
func Build(e *Engine, d Description, opt Options) (*Network, error) {
	if opt.BufSize == 0 {
		opt.BufSize = 2048
	}
	n := &Network{E: e, Seed: opt.Seed, byName: map[string]*Node{}, Overhead: link.IPv4UDPOverhead}
	if opt.PayloadOnly {
		n.Overhead = 0
	}
	n.pool.bufSize = opt.BufSize
	if len(d.Nodes) >= 1<<24 {
		return nil, fmt.Errorf("sim: too many nodes (%d)", len(d.Nodes))
	}
	for i, nd := range d.Nodes {
		if _, dup := n.byName[nd.Name]; dup || nd.Name == "" {
			return nil, fmt.Errorf("sim: node name %q empty or duplicate", nd.Name)
		}
		id := int32(i)
		node := &Node{Name: nd.Name, Kind: nd.Kind, ID: id,
			Addr: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})}
		n.Nodes = append(n.Nodes, node)
		n.byName[nd.Name] = node
	}
	linkNames := map[string]*Link{}
	sink := opt.Sink
	if sink == nil {
		sink = event.Discard
	}
	for i, ld := range d.Links {
		from, to := n.byName[ld.From], n.byName[ld.To]
		if from == nil || to == nil {
			return nil, fmt.Errorf("sim: link %q: unknown node %q or %q", ld.Name, ld.From, ld.To)
		}
		if _, dup := linkNames[ld.Name]; dup || ld.Name == "" {
			return nil, fmt.Errorf("sim: link name %q empty or duplicate", ld.Name)
		}
		stream := ld.Stream
		if stream == "" {
			stream = "link/" + ld.Name
		}
		env := link.Env{Rand: traffic.Stream(opt.Seed, stream), Sink: sink, Index: int32(i), Free: n.pool.Free,
			LossKey: link.HashedKey(opt.Seed, stream)}
		if opt.Quiet != nil && opt.Quiet(int32(i)) {
			env.Sink = nil
		}
		ll, err := link.New(ld.Config, env)
		if err != nil {
			return nil, fmt.Errorf("sim: link %q: %v", ld.Name, err)
		}
		l := &Link{Link: ll, Name: ld.Name, ID: int32(i), From: from, To: to, net: n, through: ll.Transparent()}
		e.InitTimer(&l.timer, l, 0)
		n.Links = append(n.Links, l)
		linkNames[ld.Name] = l
	}
	n.links = linkNames
	n.computeRoutes()
	for _, r := range d.Routes {
		at, dest, via := n.byName[r.At], n.byName[r.Dest], linkNames[r.Via]
		if at == nil || dest == nil || via == nil || via.From != at {
			return nil, fmt.Errorf("sim: route %+v: unknown node/link or link does not leave %q", r, r.At)
		}
		if at.routes == nil {
			at.routes = make([]int32, len(n.Nodes))
			for i := range at.routes {
				at.routes[i] = at.defRoute
			}
		}
		at.routes[dest.ID] = via.ID
	}
	return n, nil
}

// computeRoutes gives every node its next links towards every other node,
// by fewest hops: a node with a single outgoing link uses it for everything
// (a default route, no table); others get a table from a breadth-first
// search over the graph in which hosts do not forward. Ties go to the
// lower-numbered link, so routes are deterministic.
func (n *Network) computeRoutes() {
	out := make([][]*Link, len(n.Nodes)) // links leaving each node, in link order
	for _, l := range n.Links {
		out[l.From.ID] = append(out[l.From.ID], l)
	}
	first := make([]int32, len(n.Nodes)) // per reached node: the source's link it is reached through
	queue := make([]int32, 0, len(n.Nodes))
	for _, src := range n.Nodes {
		switch len(out[src.ID]) {
		case 0:
			src.defRoute = -1
			continue
		case 1:
			src.defRoute = out[src.ID][0].ID
			continue
		}
		src.defRoute = -1
		src.routes = make([]int32, len(n.Nodes))
		for i := range first {
			first[i] = -1
		}
		queue = queue[:0]
		for _, l := range out[src.ID] {
			if v := l.To.ID; v != src.ID && first[v] < 0 {
				first[v] = l.ID
				queue = append(queue, v)
			}
		}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			if n.Nodes[v].Kind == Host {
				continue // hosts do not forward
			}
			for _, l := range out[v] {
				if w := l.To.ID; w != src.ID && first[w] < 0 {
					first[w] = first[v]
					queue = append(queue, w)
				}
			}
		}
		copy(src.routes, first)
	}
}

// route returns the outgoing link ID at node for destination dst, or -1.
func (node *Node) route(dst int32) int32 {
	if node.routes == nil {
		return node.defRoute
	}
	return node.routes[dst]
}

// Advance runs every link up to now, so that every queue event up to now
// has been emitted (link.Link.Advance): before a measurement window opens
// and when it closes.
func (n *Network) Advance(now clock.Time) {
	for _, l := range n.Links {
		l.Link.Advance(now)
	}
}

// Node returns the node called name, or nil.
func (n *Network) Node(name string) *Node { return n.byName[name] }

// LinkByName returns the link called name, or nil.
func (n *Network) LinkByName(name string) *Link { return n.links[name] }

// Route returns the link node from uses towards host to, or nil.
func (n *Network) Route(from, to *Node) *Link {
	if id := from.route(to.ID); id >= 0 {
		return n.Links[id]
	}
	return nil
}

// Path returns the links a packet from src to dst crosses, in order.
func (n *Network) Path(src, dst *Node) []*Link {
	var out []*Link
	for at := src; at != dst && len(out) <= len(n.Links); {
		l := n.Route(at, dst)
		if l == nil {
			return nil
		}
		out = append(out, l)
		at = l.To
	}
	return out
}

// Send injects p at node src towards the node recorded in its metadata
// (Pool.Meta(p).Dst). p must come from the network's pool.
func (n *Network) Send(now clock.Time, src *Node, p *qdisc.Packet) {
	n.forward(now, src, p, n.pool.Meta(p).Dst)
}

// forward sends p, addressed to node dst, on from node at.
func (n *Network) forward(now clock.Time, at *Node, p *qdisc.Packet, dst int32) {
	id := at.route(dst)
	if id < 0 {
		at.Dropped++
		n.pool.Free(p)
		return
	}
	l := n.Links[id]
	if l.through && !l.firing && l.Link.Through(now, p) { // an idle access link: straight to its far end
		n.arrive(now, l.To, p)
		return
	}
	l.send(now, p)
}

func (n *Network) arrive(now clock.Time, at *Node, p *qdisc.Packet) {
	dst := n.pool.Meta(p).Dst
	if dst != at.ID {
		if at.Kind == Router {
			n.forward(now, at, p, dst)
			return
		}
		at.Dropped++
		n.pool.Free(p)
		return
	}
	if at.Receiver != nil {
		at.Receiver.Receive(now, p)
	}
	n.pool.Free(p)
}

// Pool returns the network's packet pool.
func (n *Network) Pool() *Pool { return &n.pool }

// AddrPort returns the synthetic address of node id at port.
func AddrPort(id int32, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(id >> 16), byte(id >> 8), byte(id)}), port)
}

// NodeID decodes a synthetic address back to its node ID (-1 if it is not one).
func NodeID(a netip.AddrPort) int32 {
	if !a.Addr().Is4() {
		return -1
	}
	b := a.Addr().As4()
	if b[0] != 10 {
		return -1
	}
	return int32(b[1])<<16 | int32(b[2])<<8 | int32(b[3])
}

// Meta is a packet's simulator-side envelope: what an IP/UDP header would say.
type Meta struct {
	Src, Dst         int32      // node IDs
	SrcPort, DstPort uint16     // UDP ports
	Sent             clock.Time // when the source handed it to the network
	Seq              uint64     // per-flow sequence number (raw UDP flows)
}

// Pool recycles packets and their buffers so the packet path does not
// allocate in steady state.
//
// A packet's header (qdisc.Packet), its Meta and its liveness flag share
// one 128-byte slot, an allocation of its own size class, which the Go
// allocator places on a 128-byte boundary: every slot is exactly two cache
// lines, the header's fields the links and queues read (Buf, Size, Flow,
// ID, Enqueued, ECN) in the first, the envelope (Meta) in the second. A
// packet's header goes out of the cache while it waits in a queue or
// propagates; at the far end a hop then finds it in two lines instead of
// three or four (an 80-byte header allocated alone straddles two lines,
// its Meta in a separate array a third, the pool's table of pointers a
// fourth).
type Pool struct {
	bufSize int
	made    int // slots ever created
	free    []*pktSlot
	nextID  uint64
	inUse   int
}

// pktSlot is one pooled packet: header (first, so that a *qdisc.Packet
// from the pool points at its slot), envelope and whether it is handed out
// (catches double frees), padded to two cache lines.
type pktSlot struct {
	pk   qdisc.Packet
	meta Meta
	live bool
	_    [128 - unsafe.Sizeof(qdisc.Packet{}) - unsafe.Sizeof(Meta{}) - 1]byte
}

// slotOf returns the slot of a pooled packet.
func slotOf(pk *qdisc.Packet) *pktSlot { return (*pktSlot)(unsafe.Pointer(pk)) }

// Get returns a packet with an empty Buf of capacity bufSize, a fresh ID
// and zeroed Meta.
func (p *Pool) Get() *qdisc.Packet {
	var s *pktSlot
	if k := len(p.free); k > 0 {
		s = p.free[k-1]
		p.free = p.free[:k-1]
	} else {
		if p.bufSize == 0 {
			p.bufSize = 2048
		}
		s = &pktSlot{pk: qdisc.Packet{Buf: make([]byte, 0, p.bufSize)}}
		p.made++
	}
	s.live = true
	p.nextID++
	s.pk = qdisc.Packet{Buf: s.pk.Buf[:0], ID: p.nextID}
	s.meta = Meta{}
	p.inUse++
	return &s.pk
}

// Meta returns the envelope of a pooled packet.
func (p *Pool) Meta(pk *qdisc.Packet) *Meta { return &slotOf(pk).meta }

// Free returns a packet to the pool. Freeing a packet twice panics: it
// would hand one buffer to two owners.
func (p *Pool) Free(pk *qdisc.Packet) {
	s := slotOf(pk)
	if !s.live {
		panic("sim: packet freed twice")
	}
	s.live = false
	p.free = append(p.free, s)
	p.inUse--
}

// InUse returns the number of packets handed out and not yet freed.
func (p *Pool) InUse() int { return p.inUse }

// Allocated returns the number of packets the pool has ever created.
func (p *Pool) Allocated() int { return p.made }
