package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"cclab/clock"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
)

func names(ls []*Link) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

func TestRoutes(t *testing.T) {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 3, Rate: 10e6, Delay: 10 * time.Millisecond, Queue: "droptail:20p"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(NewEngine(), ChainConfig{Hops: 3, Rate: 10e6, Delay: time.Millisecond, Queue: "droptail:20p", Flows: 1, Cross: 2}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		net      *Network
		src, dst *Node
		want     []string
	}{
		{"dumbbell forward", db.Net, db.Senders[1], db.Receivers[1], []string{"s1>left", "left>right", "right>r1"}},
		{"dumbbell reverse", db.Net, db.Receivers[2], db.Senders[2], []string{"r2>right", "right>left", "left>s2"}},
		{"dumbbell cross pair", db.Net, db.Senders[0], db.Receivers[2], []string{"s0>left", "left>right", "right>r2"}},
		{"hosts do not forward", db.Net, db.Senders[0], db.Senders[1], []string{"s0>left", "left>s1"}},
		{"chain end to end", ch.Net, ch.Senders[0], ch.Receivers[0], []string{"m_s0>q0", "q0>q1", "q1>q2", "q2>q3", "q3>m_r0"}},
		{"chain end to end reverse", ch.Net, ch.Receivers[0], ch.Senders[0], []string{"m_r0>q3", "q3>q2", "q2>q1", "q1>q0", "q0>m_s0"}},
		{"chain cross hop 1 only", ch.Net, ch.CrossSenders[1][0], ch.CrossReceivers[1][0], []string{"c1_s0>q1", "q1>q2", "q2>c1_r0"}},
		{"chain cross hop 2 only", ch.Net, ch.CrossSenders[2][1], ch.CrossReceivers[2][1], []string{"c2_s1>q2", "q2>q3", "q3>c2_r1"}},
	}
	for _, tc := range tests {
		got := names(tc.net.Path(tc.src, tc.dst))
		if len(got) != len(tc.want) {
			t.Errorf("%s: path got %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: path got %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestExplicitRouteAndErrors(t *testing.T) {
	// a triangle: a-b direct (fewest hops) and a-c-b; force a→b via c.
	var d Description
	for _, n := range []string{"a", "b"} {
		d.AddNode(n, Host)
	}
	d.AddNode("x", Router)
	d.AddNode("y", Router)
	d.AddNode("z", Router)
	cfg := link.Config{Rate: 1e6}
	d.AddDuplex("a", "x", cfg, cfg)
	d.AddDuplex("x", "y", cfg, cfg)
	d.AddDuplex("y", "b", cfg, cfg)
	d.AddDuplex("x", "z", cfg, cfg)
	d.AddDuplex("z", "y", cfg, cfg)
	d.Routes = []RouteDesc{{At: "x", Dest: "b", Via: "x>z"}}
	n, err := Build(NewEngine(), d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := names(n.Path(n.Node("a"), n.Node("b")))
	want := []string{"a>x", "x>z", "z>y", "y>b"}
	if len(got) != len(want) || got[1] != "x>z" {
		t.Errorf("path got %v, want %v", got, want)
	}
	bad := []Description{
		{Nodes: []NodeDesc{{Name: "a"}, {Name: "a"}}},
		{Nodes: []NodeDesc{{Name: "a"}}, Links: []LinkDesc{{Name: "l", From: "a", To: "nope"}}},
		{Nodes: []NodeDesc{{Name: "a"}, {Name: "b"}}, Links: []LinkDesc{{Name: "l", From: "a", To: "b", Config: link.Config{Queue: "bogus"}}}},
		{Nodes: []NodeDesc{{Name: "a"}, {Name: "b"}}, Routes: []RouteDesc{{At: "a", Dest: "b", Via: "none"}}},
	}
	for i, d := range bad {
		if _, err := Build(NewEngine(), d, Options{}); err == nil {
			t.Errorf("bad description %d: got no error", i)
		}
	}
}

func TestAddrRoundTrip(t *testing.T) {
	for _, id := range []int32{0, 1, 255, 256, 70000, 1<<24 - 1} {
		if got := NodeID(AddrPort(id, 99)); got != id {
			t.Errorf("NodeID(AddrPort(%d)) got %d", id, got)
		}
	}
}

// TestUDPThroughDumbbell: CBR flows below capacity arrive whole with one-way
// delay = propagation + serialization; above capacity the bottleneck carries
// exactly its rate and the pool does not leak.
func TestUDPThroughDumbbell(t *testing.T) {
	tests := []struct {
		name      string
		rates     []float64 // bits/s per flow
		wantLoss  bool
		wantTotal float64 // delivered payload+header rate at the bottleneck, bits/s
	}{
		{"under capacity", []float64{2e6, 3e6}, false, 5e6 * float64(1000+link.IPv4UDPOverhead) / 1000},
		{"overload", []float64{8e6, 8e6}, true, 10e6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			db, err := NewDumbbell(e, DumbbellConfig{Flows: len(tc.rates), Rate: 10e6, Delay: 10 * time.Millisecond,
				Queue: "droptail:50p", AccessDelays: []time.Duration{5 * time.Millisecond}}, Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			s := New(db.Net, nil)
			for i, r := range tc.rates {
				g, err := traffic.NewCBR(traffic.CBRConfig{Rate: traffic.Rate(r), Size: 1000}, nil)
				if err != nil {
					t.Fatal(err)
				}
				s.AddUDPFlow("u", db.Senders[i], db.Receivers[i], 5000, g, clock.Start)
			}
			e.RunFor(10 * time.Second)
			var lost int64
			for _, f := range s.UDP {
				lost += f.Stats.Lost
				if !tc.wantLoss {
					// propagation 15 ms + serialization of 1028 bytes at 10 Mbit/s (access links unlimited)
					min := 15*time.Millisecond + time.Duration(1028*8*100)
					if mean := f.Stats.DelaySum / time.Duration(f.Stats.Received); mean < min || mean > min+time.Millisecond {
						t.Errorf("mean one-way delay got %v, want about %v", mean, min)
					}
				}
			}
			if (lost > int64(len(tc.rates))*2) != tc.wantLoss {
				t.Errorf("lost got %d, want loss %v", lost, tc.wantLoss)
			}
			st := db.Forward.Stats()
			thr := float64(st.DepartureBytes) * 8 / 10
			if math.Abs(thr-tc.wantTotal) > 0.01*tc.wantTotal {
				t.Errorf("bottleneck throughput got %.0f, want %.0f ±1%%", thr, tc.wantTotal)
			}
			inFlight := 0
			for _, l := range db.Net.Links {
				ls := l.Stats()
				inFlight += ls.QueueLen + ls.InTransit
			}
			if got := db.Net.Pool().InUse(); got != inFlight {
				t.Errorf("pool in use got %d, want %d (packets queued or in transit): leak", got, inFlight)
			}
		})
	}
}

// BenchmarkUDPPacketPath measures the simulator's packet path (generator,
// pool, three links, routing, receiver) per datagram; it must not allocate.
func BenchmarkUDPPacketPath(b *testing.B) {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 1, Rate: 100e6, Delay: 10 * time.Millisecond,
		Queue: "droptail:100p"}, Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	s := New(db.Net, nil)
	g, _ := traffic.NewCBR(traffic.CBRConfig{Rate: 50e6, Size: 1000}, nil)
	f := s.AddUDPFlow("u", db.Senders[0], db.Receivers[0], 5000, g, clock.Start)
	e.RunFor(time.Second) // warm up: pools and rings grown
	b.ReportAllocs()
	b.ResetTimer()
	start := f.Stats.Received
	for f.Stats.Received-start < int64(b.N) {
		e.Step()
	}
}

// TestDescriptionJSON: a description survives a JSON round trip (scenario
// files) and builds the same routes.
func TestDescriptionJSON(t *testing.T) {
	d, err := ChainConfig{Hops: 2, Rate: 10e6, Delay: 5 * time.Millisecond, Queue: "red:min=5,max=15,maxp=0.1", Flows: 1, Cross: 1}.Description()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Description
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	n, err := Build(NewEngine(), back, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := names(n.Path(n.Node("m_s0"), n.Node("m_r0")))
	if want := "m_s0>q0 q0>q1 q1>q2 q2>m_r0"; strings.Join(got, " ") != want {
		t.Errorf("path after JSON round trip got %v, want %s", got, want)
	}
	if l := n.LinkByName("q0>q1"); l.Config().Delay != 5*time.Millisecond || l.Config().Queue != "red:min=5,max=15,maxp=0.1" {
		t.Errorf("hop config after round trip: %+v", l.Config())
	}
}

// BenchmarkPoolInFlight measures a packet's round through the pool with
// many packets in flight, as at a loaded bottleneck of a large simulation:
// get one and fill its header and envelope, queue it behind the others,
// and take the oldest out, reading what a hop reads at the far end (size,
// flow, ID, enqueue instant, destination), and free it. With tens of
// thousands in flight the oldest packet's header and envelope are out of
// the cache (Pool's slot layout).
func BenchmarkPoolInFlight(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 18} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) {
			p := Pool{bufSize: 64} // small buffers: the benchmark reads headers only
			ring := make([]*qdisc.Packet, n)
			for i := range ring {
				ring[i] = p.Get()
			}
			// Shuffle the slots, as packets of many flows interleave.
			rng := rand.New(rand.NewPCG(1, 2))
			rng.Shuffle(n, func(i, j int) { ring[i], ring[j] = ring[j], ring[i] })
			var sum int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i & (n - 1)
				q := ring[k]
				sum += int64(q.Size) + int64(q.Flow) + int64(q.ID) + int64(q.Enqueued) + int64(p.Meta(q).Dst)
				p.Free(q)
				pk := p.Get()
				pk.Size, pk.Flow, pk.Enqueued = 1228, uint64(i), clock.Time(i)
				*p.Meta(pk) = Meta{Src: 1, Dst: int32(i), SrcPort: 4433, DstPort: 4433}
				ring[k] = pk
			}
			if sum == 0 {
				b.Log("no work")
			}
		})
	}
}

// TestPoolSlotLayout checks that a pooled packet's header and envelope
// fill exactly two cache lines, the first holding the fields every hop
// reads (Pool, qdisc.Packet), and that slots start on a line.
func TestPoolSlotLayout(t *testing.T) {
	if got := unsafe.Sizeof(pktSlot{}); got != 128 {
		t.Errorf("pktSlot is %d bytes, want 128", got)
	}
	var pk qdisc.Packet
	for _, f := range []struct {
		name string
		end  uintptr
	}{
		{"Buf", unsafe.Offsetof(pk.Buf) + unsafe.Sizeof(pk.Buf)},
		{"Size", unsafe.Offsetof(pk.Size) + unsafe.Sizeof(pk.Size)},
		{"Flow", unsafe.Offsetof(pk.Flow) + unsafe.Sizeof(pk.Flow)},
		{"ID", unsafe.Offsetof(pk.ID) + unsafe.Sizeof(pk.ID)},
		{"Enqueued", unsafe.Offsetof(pk.Enqueued) + unsafe.Sizeof(pk.Enqueued)},
		{"ECN", unsafe.Offsetof(pk.ECN) + unsafe.Sizeof(pk.ECN)},
	} {
		if f.end > 64 {
			t.Errorf("qdisc.Packet.%s ends at byte %d, want within the first 64", f.name, f.end)
		}
	}
	var p Pool
	for i := range 200 {
		if a := uintptr(unsafe.Pointer(p.Get())); a%64 != 0 {
			t.Fatalf("packet %d at %#x: not on a 64-byte line", i, a)
		}
	}
}
