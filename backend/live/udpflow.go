package liverun

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/hostlimit"
	"cclab/netio"
	"cclab/plan"
	"cclab/traffic"
)

// Raw UDP flows live (plan.Flow.Mode "udp"): each sends its generator's
// datagrams (cbr, udponoff, layered) from its own socket through a relay
// entry whose target is one shared UDP receiver, and is measured like the
// simulator's sim.UDPFlow through the one metric pipeline: PacketSent at
// the sender, Delivered at the receiver, and the relay's link events (drops
// by flow) mapped to the flow's number by its socket's flow key.

// udpHeaderLen is the live raw UDP datagram's header: the simulator's
// sequence number and send time (traffic.UDPHeaderLen: 8 bytes each, big
// endian; the send time on the run's common clock, ns) and the flow's
// number (8 bytes), which the shared receiver needs to tell the flows apart.
const udpHeaderLen = traffic.UDPHeaderLen + 8

// putUDPHeader writes the header of datagram seq of flow, sent at sent.
func putUDPHeader(b []byte, flow, seq uint64, sent clock.Time) {
	binary.BigEndian.PutUint64(b[0:], seq)
	binary.BigEndian.PutUint64(b[8:], uint64(sent))
	binary.BigEndian.PutUint64(b[16:], flow)
}

// parseUDPHeader reads a datagram's header; ok is false for a datagram
// shorter than the header.
func parseUDPHeader(b []byte) (flow, seq uint64, sent clock.Time, ok bool) {
	if len(b) < udpHeaderLen {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint64(b[16:]), binary.BigEndian.Uint64(b[0:]), clock.Time(binary.BigEndian.Uint64(b[8:])), true
}

// udpFlow is one live raw UDP flow: its generator (shared by the sender
// and, for a layered source, the receiver's feedback) and its receiver-side
// counters, under mu.
type udpFlow struct {
	f    *plan.Flow
	conn *net.UDPConn // the sender's socket, connected to its relay entry
	key  uint64       // its relay flow key (linkSink.drops)
	sink *shiftSink   // the flow's events, on the common clock
	// sendEv and recvEv are the events the sending and the receiving
	// goroutine give sink (it takes a pointer; one each: no sharing).
	sendEv, recvEv event.Event

	// late is the sender's lateness against its generator's schedule
	// (written by the sender goroutine; read once the senders ended): an
	// open-loop sender late by more than its gap sends what it owes at once.
	late hostlimit.Late

	mu    sync.Mutex
	gen   traffic.DatagramGen
	fb    traffic.FeedbackGen
	stats traffic.UDPStats
}

// newUDPFlow builds flow f's generator from its traffic spec and seeded
// stream, and dials its relay entry from a socket of its own.
func newUDPFlow(p *plan.Plan, f *plan.Flow, host string, to net.Addr, sink *shiftSink) (*udpFlow, error) {
	g, err := traffic.New(f.Traffic, traffic.Env{Rand: p.Rand(f.TrafficStream), MSS: f.Datagram})
	if err != nil {
		return nil, err
	}
	dg, ok := g.(traffic.DatagramGen)
	if !ok {
		return nil, fmt.Errorf("flow %s: traffic %q is not a datagram generator (cbr, udponoff, layered)", f.Name, f.Traffic)
	}
	raddr, ok := to.(*net.UDPAddr)
	if !ok {
		return nil, fmt.Errorf("flow %s: relay entry %v is not a UDP address", f.Name, to)
	}
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(host)}, raddr)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %v", f.Name, err)
	}
	u := &udpFlow{f: f, conn: conn, sink: sink, gen: dg}
	u.fb, _ = dg.(traffic.FeedbackGen)
	return u, nil
}

// send runs the sender: from the flow's start to its stop (or the end of
// the run) it writes each datagram at the generator's instant (late ones at
// once: the schedule is open-loop), with a PacketSent event per datagram.
func (u *udpFlow) send(ctx context.Context, cm common, start, end clock.Time) error {
	stop := end
	if u.f.Stop > 0 {
		stop = start.Add(u.f.Stop)
	}
	buf := make([]byte, 64<<10)
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	u.mu.Lock()
	at, size := u.gen.NextDatagram(start.Add(u.f.Start))
	u.mu.Unlock()
	for seq := uint64(0); at != clock.Never && at <= stop; seq++ {
		if d := at.Sub(cm.now()); d > 0 {
			tm.Reset(d)
			select {
			case <-tm.C:
			case <-ctx.Done():
				return nil
			}
		}
		size = min(max(size, udpHeaderLen), len(buf))
		now := cm.now()
		u.late.Add(max(0, now.Sub(at)))
		putUDPHeader(buf, u.f.ID, seq, now)
		if _, err := u.conn.Write(buf[:size]); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("flow %s: %v", u.f.Name, err)
		}
		u.sendEv = event.Event{Time: now, Kind: event.PacketSent, Flow: u.f.ID, Link: -1, Seq: seq, Bytes: size}
		u.sink.Record(&u.sendEv)
		u.mu.Lock()
		u.stats.Sent++
		u.stats.SentBytes += int64(size)
		at, size = u.gen.NextDatagram(at)
		u.mu.Unlock()
	}
	return nil
}

// udpReceiver reads the raw UDP flows' datagrams at the relay's entry
// target until conn closes: each is accounted to its flow (traffic.UDPStats:
// sequence gaps as losses, a layered source's feedback) with a Delivered
// event; datagrams too short for the header or of no known flow are
// counted in bad and dropped.
func udpReceiver(conn *net.UDPConn, cm common, flows map[uint64]*udpFlow, bad *int64) {
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		now := cm.now()
		flow, seq, sent, ok := parseUDPHeader(buf[:n])
		u := flows[flow]
		if !ok || u == nil {
			*bad++
			continue
		}
		u.mu.Lock()
		u.stats.Receive(now, seq, n, sent, u.fb)
		u.mu.Unlock()
		u.recvEv = event.Event{Time: now, Kind: event.Delivered, Flow: u.f.ID, Link: -1, Seq: seq, Bytes: n}
		u.sink.Record(&u.recvEv)
	}
}

// udpDrain bounds how long a run waits, once its senders ended, for the raw
// UDP flows' datagrams still in flight (in socket buffers, the relay's
// queues and links) to arrive or be dropped before it counts them.
const udpDrain = 2 * time.Second

// udpAccount is the raw UDP flows' run-wide accounting: datagrams sent,
// received, dropped at a link, and dropped by full socket receive buffers
// on their path.
type udpAccount struct {
	sent, received, linkDrops, recvDrops int64
}

// unaccounted returns the datagrams sent and neither received nor dropped
// where it is counted.
func (a udpAccount) unaccounted() int64 { return a.sent - a.received - a.linkDrops - a.recvDrops }

// udpAccount sums the raw UDP flows' accounting as it stands.
func (lr *liveRun) udpAccount() udpAccount {
	var a udpAccount
	lr.mu.Lock()
	for _, u := range lr.udpFlows {
		a.linkDrops += lr.links.drops[u.key]
	}
	lr.mu.Unlock()
	for _, u := range lr.udpFlows {
		u.mu.Lock()
		a.sent += u.stats.Sent
		a.received += u.stats.Received
		u.mu.Unlock()
	}
	d, _ := netio.ReceiveDrops(lr.urecv)
	for _, e := range lr.uentries {
		n, _ := lr.rl.EntryReceiveDrops(e)
		d += n
	}
	a.recvDrops = int64(d)
	return a
}

// drainUDP waits, once the senders ended, until every raw UDP datagram
// sent is accounted for (received or dropped), for at most limit, and
// returns the accounting then: what is still missing vanished, or was
// still in flight after limit.
func (lr *liveRun) drainUDP(limit time.Duration) udpAccount {
	a := lr.udpAccount()
	if a.unaccounted() <= 0 {
		return a
	}
	tk := time.NewTicker(5 * time.Millisecond)
	defer tk.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		select {
		case <-tk.C:
		case <-deadline.C:
			return lr.udpAccount()
		case <-lr.ctx.Done():
			return lr.udpAccount()
		}
		if a = lr.udpAccount(); a.unaccounted() <= 0 {
			return a
		}
	}
}
