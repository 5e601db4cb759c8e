package link

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/qdisc"
)

const t0 = clock.Start

func pkt(id uint64, size int) *qdisc.Packet {
	return &qdisc.Packet{ID: id, Size: size, Flow: 1}
}

func newLink(t testing.TB, cfg Config, sink event.Sink) *Link {
	t.Helper()
	l, err := New(cfg, Env{Rand: rand.New(rand.NewPCG(7, 8)), Sink: sink})
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return l
}

type arrival struct {
	id uint64
	at clock.Time
}

// drain runs the link by its deadlines until it is idle and returns every
// delivered packet with its arrival instant, asserting the driver is called
// exactly at each deadline.
func drain(t *testing.T, l *Link) []arrival {
	t.Helper()
	var out []arrival
	for i := 0; i < 1_000_000; i++ {
		d := l.Deadline()
		if d == clock.Never {
			return out
		}
		for {
			p, at := l.DeliverAt(d)
			if p == nil {
				break
			}
			if at > d && at > l.now {
				t.Fatalf("DeliverAt(%v) returned arrival %v after now", d, at)
			}
			out = append(out, arrival{p.ID, at})
		}
	}
	t.Fatal("link never became idle")
	return nil
}

func TestSerializationInstants(t *testing.T) {
	// 8 Mbit/s: a 1000-byte packet takes exactly 1 ms.
	tests := []struct {
		name  string
		sends []clock.Time // arrival instants of 1000-byte packets
		delay time.Duration
		want  []clock.Time // far-end arrival instants
	}{
		{"back to back burst", []clock.Time{t0, t0, t0},
			0, []clock.Time{t0.Add(1 * time.Millisecond), t0.Add(2 * time.Millisecond), t0.Add(3 * time.Millisecond)}},
		{"idle gap restarts at arrival", []clock.Time{t0, t0.Add(5 * time.Millisecond)},
			0, []clock.Time{t0.Add(1 * time.Millisecond), t0.Add(6 * time.Millisecond)}},
		{"arrival during service waits", []clock.Time{t0, t0.Add(500 * time.Microsecond)},
			0, []clock.Time{t0.Add(1 * time.Millisecond), t0.Add(2 * time.Millisecond)}},
		{"delay added after departure", []clock.Time{t0, t0},
			10 * time.Millisecond, []clock.Time{t0.Add(11 * time.Millisecond), t0.Add(12 * time.Millisecond)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLink(t, Config{Rate: 8e6, Delay: tc.delay, Queue: "droptail:100p"}, nil)
			var got []arrival
			// Interleave sends with deliveries in time order, as a driver would.
			for i, at := range tc.sends {
				for d := l.Deadline(); d != clock.Never && d <= at; d = l.Deadline() {
					for p, a := l.DeliverAt(d); p != nil; p, a = l.DeliverAt(d) {
						got = append(got, arrival{p.ID, a})
					}
				}
				l.Send(at, pkt(uint64(i), 1000))
			}
			got = append(got, drain(t, l)...)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d deliveries, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i].id != uint64(i) || got[i].at != tc.want[i] {
					t.Errorf("delivery %d: got packet %d at %v, want packet %d at %v", i, got[i].id, got[i].at, i, tc.want[i])
				}
			}
		})
	}
}

func TestLateDriverKeepsModelledInstants(t *testing.T) {
	// The driver calls only once, long after everything happened: the
	// arrival instants must still be the modelled ones.
	l := newLink(t, Config{Rate: 8e6, Delay: 2 * time.Millisecond}, nil)
	for i := 0; i < 3; i++ {
		l.Send(t0, pkt(uint64(i), 1000))
	}
	late := t0.Add(time.Second)
	for i := 0; i < 3; i++ {
		p, at := l.DeliverAt(late)
		want := t0.Add(time.Duration(i+1)*time.Millisecond + 2*time.Millisecond)
		if p == nil || at != want {
			t.Fatalf("delivery %d: got %v at %v, want arrival %v", i, p, at, want)
		}
	}
	if p := l.Deliver(late); p != nil {
		t.Errorf("got extra packet %d, want nil", p.ID)
	}
	if d := l.Deadline(); d != clock.Never {
		t.Errorf("Deadline after drain: got %v, want never", d)
	}
}

func TestLongRunRateExact(t *testing.T) {
	// 1500-byte packets at 7 Mbit/s take 1714285.714... ns; the carried
	// remainder keeps the total exact to within 1 ns.
	l := newLink(t, Config{Rate: 7e6, Queue: "droptail:100000p"}, nil)
	const n = 10000
	for i := 0; i < n; i++ {
		l.Send(t0, pkt(uint64(i), 1500))
	}
	got := drain(t, l)
	last := got[len(got)-1].at
	want := float64(n) * 1500 * 8 / 7e6 * 1e9
	if diff := math.Abs(float64(last.Sub(t0)) - want); diff > 1 {
		t.Errorf("last departure after %v ns, want %v ns (diff %v ns)", float64(last.Sub(t0)), want, diff)
	}
}

func TestUnlimitedRate(t *testing.T) {
	l := newLink(t, Config{Delay: 3 * time.Millisecond}, nil)
	l.Send(t0, pkt(1, 1500))
	l.Send(t0, pkt(2, 1500))
	got := drain(t, l)
	for _, a := range got {
		if a.at != t0.Add(3*time.Millisecond) {
			t.Errorf("packet %d arrived at %v, want %v", a.id, a.at, t0.Add(3*time.Millisecond))
		}
	}
}

func TestJitterNeverReorders(t *testing.T) {
	delay, jitter := 10*time.Millisecond, 5*time.Millisecond
	// Sends every 100 µs, far less than the jitter, so jitter would reorder.
	l2 := newLink(t, Config{Rate: 100e6, Delay: delay, Jitter: jitter, Queue: "droptail:10000p"}, nil)
	var sends []clock.Time
	for i := 0; i < 2000; i++ {
		at := t0.Add(time.Duration(i) * 100 * time.Microsecond)
		sends = append(sends, at)
		l2.Send(at, pkt(uint64(i), 1000))
	}
	got := drain(t, l2)
	if len(got) != 2000 {
		t.Fatalf("got %d deliveries, want 2000", len(got))
	}
	tx := time.Duration(1000 * 8 * 1e9 / 100e6)
	varied := false
	for i, a := range got {
		if a.id != uint64(i) {
			t.Fatalf("delivery %d is packet %d: jitter reordered", i, a.id)
		}
		oneway := a.at.Sub(sends[i]) - tx
		if oneway < delay-jitter || oneway > 2*(delay+jitter) {
			t.Errorf("packet %d: delay %v outside [%v, %v]", i, oneway, delay-jitter, 2*(delay+jitter))
		}
		if i > 0 && a.at.Sub(got[i-1].at) != 100*time.Microsecond {
			varied = true
		}
	}
	if !varied {
		t.Errorf("jitter had no effect on arrival spacing")
	}
}

func TestJitterReorderAllowed(t *testing.T) {
	l := newLink(t, Config{Rate: 100e6, Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, Reorder: true, Queue: "droptail:10000p"}, nil)
	for i := 0; i < 2000; i++ {
		l.Send(t0.Add(time.Duration(i)*100*time.Microsecond), pkt(uint64(i), 1000))
	}
	got := drain(t, l)
	reordered := 0
	for i := 1; i < len(got); i++ {
		if got[i].at < got[i-1].at {
			t.Fatalf("deliveries out of arrival order at %d", i)
		}
		if got[i].id < got[i-1].id {
			reordered++
		}
	}
	if reordered == 0 {
		t.Errorf("Reorder with jitter 5ms and 100µs spacing: got no reordering, want some")
	}
	// Delays stay within Delay ± Jitter.
	for _, a := range got {
		sent := t0.Add(time.Duration(a.id) * 100 * time.Microsecond)
		d := a.at.Sub(sent) - 80*time.Microsecond
		if d < 5*time.Millisecond || d > 15*time.Millisecond {
			t.Errorf("packet %d: delay %v outside [5ms, 15ms]", a.id, d)
		}
	}
}

func TestLossRates(t *testing.T) {
	tests := []struct {
		spec string
		want float64 // expected long-run loss rate
	}{
		{"bernoulli:p=0.02", 0.02},
		{"0.1", 0.1},
		{"bernoulli:0.3", 0.3},
		// Gilbert: p=0.01, r=0.3, h=0, k=1 → πB = p/(p+r) = 0.0323
		{"ge:p=0.01,r=0.3", 0.01 / 0.31},
		// Full GE: loss = (r(1-k) + p(1-h)) / (p+r)
		{"ge:p=0.05,r=0.2,h=0.5,k=0.99", (0.2*0.01 + 0.05*0.5) / 0.25},
		{"none", 0},
	}
	const n = 200000
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			l := newLink(t, Config{Loss: tc.spec, Queue: "droptail:1000000p"}, nil)
			for i := 0; i < n; i++ {
				l.Send(t0, pkt(uint64(i), 100))
			}
			st := l.Stats()
			got := float64(st.Drops[qdisc.DropRandom]) / n
			// 4 standard errors of a Bernoulli mean, widened x3 for GE burstiness.
			tol := 4*math.Sqrt(tc.want*(1-tc.want)/n)*3 + 1e-9
			if math.Abs(got-tc.want) > tol {
				t.Errorf("loss rate got %.5f, want %.5f ± %.5f", got, tc.want, tol)
			}
		})
	}
}

func TestGilbertElliottBursts(t *testing.T) {
	// With h=0, k=1 every packet in Bad is lost and loss bursts have mean
	// length 1/r (geometric sojourn in Bad).
	log := &event.Log{}
	l := newLink(t, Config{Loss: "ge:p=0.01,r=0.25", Queue: "droptail:1000000p"}, log)
	const n = 200000
	for i := 0; i < n; i++ {
		l.Send(t0, pkt(uint64(i), 100))
	}
	lost := make([]bool, n)
	for _, e := range log.Events {
		if e.Kind == event.Drop {
			lost[e.Seq] = true
		}
	}
	bursts, inBurst, lostN := 0, false, 0
	for _, x := range lost {
		if x {
			lostN++
			if !inBurst {
				bursts++
			}
		}
		inBurst = x
	}
	mean := float64(lostN) / float64(bursts)
	if math.Abs(mean-4) > 0.3 {
		t.Errorf("mean loss burst length got %.2f, want 1/r = 4 ± 0.3", mean)
	}
}

func TestSeededReproducible(t *testing.T) {
	run := func() []arrival {
		l := newLink(t, Config{Rate: 10e6, Delay: 5 * time.Millisecond, Jitter: 2 * time.Millisecond, Loss: "0.1", Queue: "droptail:50p"}, nil)
		for i := 0; i < 500; i++ {
			l.Send(t0.Add(time.Duration(i)*500*time.Microsecond), pkt(uint64(i), 1200))
		}
		return drain(t, l)
	}
	a, b := run(), run()
	if len(a) != len(b) {
		t.Fatalf("two seeded runs delivered %d and %d packets", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("two seeded runs differ at delivery %d: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestTraceSerializer(t *testing.T) {
	// Opportunities at 1, 1, 3 and 10 ms, looped every 10 ms.
	trace := "1\n1\n3\n10\n"
	tests := []struct {
		name  string
		sizes []int
		sends []clock.Time
		want  []time.Duration // arrival offsets from t0
	}{
		{"two opportunities at one instant", []int{1500, 1500, 1500}, []clock.Time{t0, t0, t0},
			[]time.Duration{1 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond}},
		{"small packets share an opportunity", []int{500, 500, 500, 500}, []clock.Time{t0, t0, t0, t0},
			[]time.Duration{1 * time.Millisecond, 1 * time.Millisecond, 1 * time.Millisecond, 1 * time.Millisecond}},
		{"large packet uses several", []int{4000}, []clock.Time{t0},
			[]time.Duration{3 * time.Millisecond}},
		{"loops with period 10ms", []int{1500, 1500, 1500, 1500, 1500, 1500}, []clock.Time{t0, t0, t0, t0, t0, t0},
			[]time.Duration{1 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 11 * time.Millisecond, 11 * time.Millisecond}},
		{"unused opportunity is lost", []int{1500}, []clock.Time{t0.Add(2 * time.Millisecond)},
			[]time.Duration{3 * time.Millisecond}},
		{"leftover bytes do not carry to later instants", []int{500, 1500}, []clock.Time{t0, t0.Add(2 * time.Millisecond)},
			[]time.Duration{1 * time.Millisecond, 3 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLink(t, Config{Trace: trace, Start: t0, Queue: "droptail:100p"}, nil)
			l.advance(t0)
			var got []arrival
			for i, at := range tc.sends {
				for d := l.Deadline(); d != clock.Never && d <= at; d = l.Deadline() {
					for p, a := l.DeliverAt(d); p != nil; p, a = l.DeliverAt(d) {
						got = append(got, arrival{p.ID, a})
					}
				}
				l.Send(at, pkt(uint64(i), tc.sizes[i]))
			}
			got = append(got, drain(t, l)...)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d deliveries, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i].at != t0.Add(tc.want[i]) {
					t.Errorf("delivery %d: got %v, want %v", i, got[i].at.Sub(t0), tc.want[i])
				}
			}
		})
	}
}

func TestTraceParseErrors(t *testing.T) {
	for _, in := range []string{"", "abc", "5\n3\n", "0\n", "-1\n", "1.5\n"} {
		if _, err := TraceFromReader(strings.NewReader(in)); err == nil {
			t.Errorf("TraceFromReader(%q): got nil error, want an error", in)
		}
	}
	tr, err := TraceFromReader(strings.NewReader("# comment\n1\n\n2\n2\n4\n"))
	if err != nil {
		t.Fatalf("TraceFromReader: %v", err)
	}
	if len(tr.Offsets) != 4 || tr.Period != 4*time.Millisecond {
		t.Errorf("got %d offsets, period %v, want 4 offsets, period 4ms", len(tr.Offsets), tr.Period)
	}
	if r := tr.Rate(1500); r != 4*1500*8/0.004 {
		t.Errorf("Rate got %v, want %v", r, 4*1500*8/0.004)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // substring the error must contain
	}{
		{Config{Rate: -1}, "Rate"},
		{Config{Rate: math.NaN()}, "Rate"},
		{Config{Rate: 1e-9}, "between 1000 and"},
		{Config{Rate: 1e14}, "Rate"},
		{Config{Delay: 1000000 * time.Hour}, "Delay"},
		{Config{Jitter: 2 * time.Hour}, "Jitter"},
		{Config{Delay: -time.Millisecond}, "Delay"},
		{Config{Jitter: -time.Millisecond}, "Jitter"},
		{Config{MTU: -5}, "MTU"},
		{Config{Loss: "2"}, "0..1"},
		{Config{Loss: "weird:p=1"}, "allowed"},
		{Config{Loss: "bernoulli:q=1"}, "allowed"},
		{Config{Loss: "ge:p=0.1,r=2"}, "r="},
		{Config{Queue: "nosuchqueue"}, "allowed"},
		{Config{Trace: "1\n2\n", Rate: 1e6}, "not both"},
		{Config{Trace: "x"}, "trace"},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg, Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): got error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestEventsAndStats(t *testing.T) {
	log := &event.Log{}
	var freed []uint64
	l, err := New(Config{Rate: 8e6, Delay: time.Millisecond, Queue: "droptail:2p"},
		Env{Sink: log, Index: 3, Free: func(p *qdisc.Packet) { freed = append(freed, p.ID) }})
	if err != nil {
		t.Fatal(err)
	}
	// 4 packets at once: one goes straight to the serializer, two queue, one overflows.
	for i := 0; i < 4; i++ {
		l.Send(t0, pkt(uint64(i), 1000))
	}
	got := drain(t, l)
	if len(got) != 3 {
		t.Fatalf("got %d deliveries, want 3", len(got))
	}
	if len(freed) != 1 || freed[0] != 3 {
		t.Errorf("Free called for %v, want [3]", freed)
	}
	counts := map[event.Kind]int{event.Enqueue: 3, event.Drop: 1, event.Dequeue: 3, event.Departure: 3, event.Mark: 0}
	for k, want := range counts {
		if got := log.Count(k); got != want {
			t.Errorf("%v events: got %d, want %d", k, got, want)
		}
	}
	for _, e := range log.Events {
		if e.Link != 3 {
			t.Errorf("event %v has Link %d, want 3", e.Kind, e.Link)
		}
		if e.Kind == event.Drop && qdisc.DropReason(e.Reason) != qdisc.DropOverflow {
			t.Errorf("drop reason got %v, want overflow", qdisc.DropReason(e.Reason))
		}
		if e.Kind == event.Dequeue {
			want := time.Duration(e.Seq) * time.Millisecond // packet i waits i ms
			if e.Sojourn != want || e.Time != t0.Add(want) {
				t.Errorf("dequeue of %d at %v sojourn %v, want at %v sojourn %v", e.Seq, e.Time, e.Sojourn, t0.Add(want), want)
			}
		}
		if e.Kind == event.Departure {
			want := t0.Add(time.Duration(e.Seq+1)*time.Millisecond + time.Millisecond)
			if e.Time != want {
				t.Errorf("departure of %d at %v, want %v", e.Seq, e.Time, want)
			}
		}
	}
	st := l.Stats()
	if st.Arrivals != 4 || st.Enqueued != 3 || st.Drops[qdisc.DropOverflow] != 1 || st.Departures != 3 ||
		st.DepartureBytes != 3000 || st.QueueDelaySum != 3*time.Millisecond || st.QueueDelayMax != 2*time.Millisecond ||
		st.BusyTime != 3*time.Millisecond || st.QueueLen != 0 || st.InTransit != 0 {
		t.Errorf("stats got %+v", st)
	}
}

func TestInjectSkipsLoss(t *testing.T) {
	l := newLink(t, Config{Loss: "1", Queue: "droptail:1000p"}, nil)
	for i := 0; i < 10; i++ {
		l.Send(t0, pkt(uint64(i), 100))
		l.Inject(t0, pkt(uint64(100+i), 100))
	}
	got := drain(t, l)
	if len(got) != 10 {
		t.Fatalf("got %d deliveries, want the 10 injected", len(got))
	}
	for _, a := range got {
		if a.id < 100 {
			t.Errorf("packet %d sent through loss=1 was delivered", a.id)
		}
	}
	if st := l.Stats(); st.Injected != 10 || st.Arrivals != 20 {
		t.Errorf("stats Injected=%d Arrivals=%d, want 10, 20", st.Injected, st.Arrivals)
	}
}

func BenchmarkLinkSendDeliver(b *testing.B) {
	l, err := New(Config{Rate: 100e6, Delay: 10 * time.Millisecond, Jitter: time.Millisecond, Loss: "0.01", Queue: "droptail:1000p"},
		Env{Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		b.Fatal(err)
	}
	pool := make([]*qdisc.Packet, 0, 4096)
	for i := 0; i < 4096; i++ {
		pool = append(pool, &qdisc.Packet{Size: 1200})
	}
	l.env.Free = func(p *qdisc.Packet) { pool = append(pool, p) }
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(100 * time.Microsecond) // 96 Mbit/s offered
		p := pool[len(pool)-1]
		pool = pool[:len(pool)-1]
		l.Send(now, p)
		for q := l.Deliver(now); q != nil; q = l.Deliver(now) {
			pool = append(pool, q)
		}
	}
}

func TestConservationWithEveryQueue(t *testing.T) {
	// Under 2x overload with several flows, every packet offered is either
	// delivered, dropped (and freed exactly once), or still inside the link.
	for _, q := range qdisc.Registry.Names() {
		t.Run(q, func(t *testing.T) {
			freed := map[uint64]int{}
			log := &event.Log{}
			l, err := New(Config{Rate: 1e6, Delay: 5 * time.Millisecond, Queue: q, Loss: "0.01"},
				Env{Rand: rand.New(rand.NewPCG(1, 2)), Sink: log, Free: func(p *qdisc.Packet) { freed[p.ID]++ }})
			if err != nil {
				t.Fatal(err)
			}
			delivered := 0
			const n = 2000
			for i := 0; i < n; i++ {
				now := t0.Add(time.Duration(i) * 2 * time.Millisecond) // 500 B every 2 ms: 2 Mbit/s into 1 Mbit/s
				for d := l.Deadline(); d != clock.Never && d <= now; d = l.Deadline() {
					for l.Deliver(d) != nil {
						delivered++
					}
				}
				p := pkt(uint64(i), 500)
				p.Flow = uint64(i % 4)
				p.ECN = 0
				if i%3 == 0 {
					l.Inject(now, p)
				} else {
					l.Send(now, p)
				}
				// The link's mirror of the queue's length (Stats, the
				// events) stays in step through its drops and dequeues.
				if got, want := l.Stats().QueueLen, l.Queue().Len(); got != want {
					t.Fatalf("packet %d: Stats().QueueLen %d, queue's Len %d", i, got, want)
				}
			}
			st := l.Stats()
			for id, k := range freed {
				if k != 1 {
					t.Errorf("packet %d freed %d times", id, k)
				}
			}
			inside := st.QueueLen + st.InTransit
			if int64(delivered)+st.TotalDrops()+int64(inside) != n || int64(len(freed)) != st.TotalDrops() {
				t.Errorf("delivered %d + dropped %d + inside %d != offered %d (freed %d)", delivered, st.TotalDrops(), inside, n, len(freed))
			}
			if got := log.Count(event.Drop); int64(got) != st.TotalDrops() {
				t.Errorf("Drop events %d, want %d", got, st.TotalDrops())
			}
		})
	}
}

// TestDeliveryDeadlineMatchesDeadline: a driver that calls the link only at
// DeliveryDeadline (one call per arrival) sees exactly what a driver
// following Deadline sees: the same packets at the same arrival instants
// and the same events in the same order, for every kind of link.
func TestDeliveryDeadlineMatchesDeadline(t *testing.T) {
	configs := []struct {
		name string
		cfg  Config
	}{
		{"droptail", Config{Rate: 2e6, Delay: 5 * time.Millisecond, Queue: "droptail:20p"}},
		{"no delay", Config{Rate: 2e6, Queue: "droptail:20p"}},
		{"jitter", Config{Rate: 2e6, Delay: 5 * time.Millisecond, Jitter: 3 * time.Millisecond, Queue: "droptail:20p"}},
		{"jitter reorder", Config{Rate: 2e6, Delay: 5 * time.Millisecond, Jitter: 4 * time.Millisecond, Reorder: true, Queue: "droptail:20p"}},
		{"trace", Config{Trace: "1\n1\n3\n4\n7\n10\n", Delay: 2 * time.Millisecond, MTU: 1500, Queue: "droptail:30p"}},
		{"loss ge", Config{Rate: 2e6, Delay: time.Millisecond, Loss: "ge:p=0.05,r=0.3", Queue: "droptail:20p"}},
		{"unlimited", Config{Delay: time.Millisecond}},
	}
	for _, q := range qdisc.Registry.Names() {
		configs = append(configs, struct {
			name string
			cfg  Config
		}{q, Config{Rate: 2e6, Delay: 3 * time.Millisecond, Queue: q, Loss: "0.01"}})
	}
	configs = append(configs, struct {
		name string
		cfg  Config
	}{"red ecn", Config{Rate: 2e6, Delay: 3 * time.Millisecond, Queue: "red:min=3,max=10,maxp=0.2,ecn,limit=30p"}})
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				got    []arrival
				events []event.Event
				stats  Stats
			}
			run := func(lazy bool) result {
				log := &event.Log{}
				l, err := New(c.cfg, Env{Rand: rand.New(rand.NewPCG(3, 4)), Sink: log})
				if err != nil {
					t.Fatal(err)
				}
				next := l.Deadline
				if lazy {
					next = l.DeliveryDeadline
				}
				var r result
				deliver := func(until clock.Time) {
					for d := next(); d != clock.Never && d <= until; d = next() {
						for p, at := l.DeliverAt(d); p != nil; p, at = l.DeliverAt(d) {
							r.got = append(r.got, arrival{p.ID, at})
						}
					}
				}
				rng := rand.New(rand.NewPCG(5, 6))
				now := t0
				for i := range 3000 {
					if rng.IntN(20) == 0 {
						now = now.Add(time.Duration(rng.IntN(50)) * time.Millisecond) // idle gaps
					}
					now = now.Add(time.Duration(rng.IntN(6000)) * time.Microsecond / 2) // about 2x overload
					deliver(now)
					p := pkt(uint64(i), 200+rng.IntN(1300))
					p.Flow = uint64(1 + i%5)
					p.ECN = ecn.ECT0
					if i%7 == 0 {
						l.Inject(now, p)
					} else {
						l.Send(now, p)
					}
				}
				deliver(clock.Time(math.MaxInt64))
				l.Advance(now.Add(time.Hour))
				r.events, r.stats = log.Events, l.Stats()
				return r
			}
			a, b := run(false), run(true)
			if len(a.got) != len(b.got) || len(a.got) == 0 {
				t.Fatalf("delivered got %d packets, want %d (> 0)", len(b.got), len(a.got))
			}
			for i := range a.got {
				if a.got[i] != b.got[i] {
					t.Fatalf("delivery %d got %+v, want %+v", i, b.got[i], a.got[i])
				}
			}
			if len(a.events) != len(b.events) {
				t.Fatalf("events got %d, want %d", len(b.events), len(a.events))
			}
			for i := range a.events {
				if a.events[i] != b.events[i] {
					t.Fatalf("event %d got %+v, want %+v", i, b.events[i], a.events[i])
				}
			}
			if a.stats != b.stats {
				t.Errorf("stats got %+v, want %+v", b.stats, a.stats)
			}
		})
	}
}

// TestThroughMatchesSend: on a transparent link Through passes every packet
// with the same counters, events (in order) and packet fields as Send
// followed by Deliver; it refuses packets the queue would drop and links
// that are not transparent, where the caller's Send does the work.
func TestThroughMatchesSend(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		transparent bool
	}{
		{"unlimited droptail", Config{}, true},
		{"byte limit below some packets", Config{Queue: "droptail:1000b"}, true},
		{"rate", Config{Rate: 1e9}, false},
		{"delay", Config{Delay: time.Microsecond}, false},
		{"loss", Config{Loss: "0.1"}, false},
		{"red", Config{Queue: "red:min=5,max=15,maxp=0.1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type out struct {
				events []event.Event
				got    []arrival
				enq    []clock.Time
				stats  Stats
				passed int
			}
			run := func(through bool) out {
				var o out
				log := &event.Log{}
				l, err := New(tc.cfg, Env{Rand: rand.New(rand.NewPCG(1, 1)), Sink: log})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(2, 2))
				now := t0
				for i := range 500 {
					now = now.Add(time.Duration(rng.IntN(3)) * time.Microsecond) // ties included
					p := pkt(uint64(i), 100+rng.IntN(1400))
					if through && l.Through(now, p) {
						o.passed++
						o.got = append(o.got, arrival{p.ID, now})
						o.enq = append(o.enq, p.Enqueued)
						continue
					}
					l.Send(now, p)
					for d := l.Deadline(); d != clock.Never && d <= now; d = l.Deadline() {
						for q, at := l.DeliverAt(d); q != nil; q, at = l.DeliverAt(d) {
							o.got = append(o.got, arrival{q.ID, at})
							o.enq = append(o.enq, q.Enqueued)
						}
					}
				}
				for d := l.Deadline(); d != clock.Never; d = l.Deadline() {
					for q, at := l.DeliverAt(d); q != nil; q, at = l.DeliverAt(d) {
						o.got = append(o.got, arrival{q.ID, at})
						o.enq = append(o.enq, q.Enqueued)
					}
				}
				o.events, o.stats = log.Events, l.Stats()
				return o
			}
			want, got := run(false), run(true)
			if tc.transparent != (got.passed > 0) {
				t.Fatalf("packets passed by Through got %d, want some: %v", got.passed, tc.transparent)
			}
			if tc.name == "byte limit below some packets" && (got.passed == 500 || want.stats.TotalDrops() == 0) {
				t.Fatalf("passed %d, dropped %d: want both some drops (refused by Through) and passes", got.passed, want.stats.TotalDrops())
			}
			if len(got.got) != len(want.got) || len(got.events) != len(want.events) {
				t.Fatalf("deliveries, events got %d, %d, want %d, %d", len(got.got), len(got.events), len(want.got), len(want.events))
			}
			for i := range want.got {
				if got.got[i] != want.got[i] || got.enq[i] != want.enq[i] {
					t.Fatalf("delivery %d got %+v (enqueued %v), want %+v (%v)", i, got.got[i], got.enq[i], want.got[i], want.enq[i])
				}
			}
			for i := range want.events {
				if got.events[i] != want.events[i] {
					t.Fatalf("event %d got %+v, want %+v", i, got.events[i], want.events[i])
				}
			}
			if got.stats != want.stats {
				t.Errorf("stats got %+v, want %+v", got.stats, want.stats)
			}
		})
	}
}
