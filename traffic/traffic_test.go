package traffic

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/clock"
)

func TestStream(t *testing.T) {
	draw := func(seed uint64, name string) []uint64 {
		r := Stream(seed, name)
		out := make([]uint64, 8)
		for i := range out {
			out[i] = r.Uint64()
		}
		return out
	}
	tests := []struct {
		name     string
		s1, s2   uint64
		n1, n2   string
		wantSame bool
	}{
		{"same seed and name", 1, 1, "flow0", "flow0", true},
		{"different seed", 1, 2, "flow0", "flow0", false},
		{"different name", 1, 1, "flow0", "flow1", false},
		{"seed zero differs from one", 0, 1, "x", "x", false},
		{"name is not concatenated with seed", 1, 1, "", "\x01", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			same := slices.Equal(draw(tc.s1, tc.n1), draw(tc.s2, tc.n2))
			if same != tc.wantSame {
				t.Errorf("streams equal got %v, want %v", same, tc.wantSame)
			}
		})
	}
}

func TestDistParse(t *testing.T) {
	tests := []struct {
		in       string
		wantErr  bool
		wantMean time.Duration
	}{
		{"1s", false, time.Second},
		{"const(250ms)", false, 250 * time.Millisecond},
		{"exp(2s)", false, 2 * time.Second},
		{"pareto(3s/1.5)", false, 3 * time.Second},
		{"pareto(scale=1s/2)", false, 2 * time.Second}, // mean = scale·k/(k-1)
		{"uniform(1s/3s)", false, 2 * time.Second},
		{"pareto(1s/1)", true, 0}, // no mean with shape <= 1
		{"pareto(scale=1s/0.9)", false, time.Duration(math.MaxInt64)},
		{"exp(1s", true, 0},
		{"exp(1s/2s)", true, 0},
		{"gauss(1s)", true, 0},
		{"uniform(3s/1s)", true, 0},
		{"exp(-1s)", true, 0},
		{"fast", true, 0},
	}
	for _, tc := range tests {
		var d DurationDist
		err := d.UnmarshalText([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error got %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		got := d.Mean()
		if tc.wantMean == time.Duration(math.MaxInt64) {
			if !math.IsInf(d.d.Mean(), 1) {
				t.Errorf("%q: mean got %v, want +Inf", tc.in, d.d.Mean())
			}
			continue
		}
		if math.Abs(float64(got-tc.wantMean)) > 1 {
			t.Errorf("%q: mean got %v, want %v", tc.in, got, tc.wantMean)
		}
		if d.String() != tc.in {
			t.Errorf("%q: String got %q", tc.in, d.String())
		}
	}
	var s SizeDist
	if err := s.UnmarshalText([]byte("pareto(12kB/1.2)")); err != nil || math.Abs(s.Mean()-12000) > 1e-6 {
		t.Errorf("size pareto(12kB/1.2): mean got %v (err %v), want 12000", s.Mean(), err)
	}
}

// TestDistMoments checks sample means (and Pareto's minimum and tail) against
// theory with a fixed seed. Tolerance 2%: with n = 200,000 the standard error
// of each mean is below 0.25% (coefficient of variation <= 1).
func TestDistMoments(t *testing.T) {
	const n = 200000
	tests := []struct {
		spec string
		mean float64 // seconds
	}{
		{"exp(1s)", 1},
		{"pareto(2s/2.5)", 2}, // CV = 1/sqrt(k(k-2)) = 0.89
		{"uniform(1s/3s)", 2},
		{"500ms", 0.5},
	}
	for _, tc := range tests {
		var d DurationDist
		if err := d.UnmarshalText([]byte(tc.spec)); err != nil {
			t.Fatal(err)
		}
		r := Stream(7, tc.spec)
		sum := 0.0
		minv := math.Inf(1)
		tail := 0
		for range n {
			x := d.Sample(r).Seconds()
			sum += x
			minv = math.Min(minv, x)
			if x > 3 {
				tail++
			}
		}
		mean := sum / n
		if math.Abs(mean-tc.mean) > 0.02*tc.mean {
			t.Errorf("%s: sample mean got %.4f s, want %.4f s ±2%%", tc.spec, mean, tc.mean)
		}
		if strings.HasPrefix(tc.spec, "pareto") {
			scale := 2 * 1.5 / 2.5 // mean·(k-1)/k = 1.2 s
			if minv < scale-1e-9 {
				t.Errorf("%s: minimum got %.4f, want >= scale %.4f", tc.spec, minv, scale)
			}
			want := math.Pow(scale/3, 2.5) // P(X > 3s)
			if got := float64(tail) / n; math.Abs(got-want) > 0.05*want {
				t.Errorf("%s: P(X>3s) got %.4f, want %.4f ±5%%", tc.spec, got, want)
			}
		}
	}
}

func mustNew(t *testing.T, s string, seed uint64, name string) Generator {
	t.Helper()
	g, err := New(s, Env{Rand: Stream(seed, name)})
	if err != nil {
		t.Fatalf("New(%q): %v", s, err)
	}
	return g
}

func TestRegistrySpecs(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr bool
	}{
		{"greedy", false},
		{"greedy:10MB", false},
		{"greedy:bytes=1000,start=1s", false},
		{"onoff", false},
		{"onoff:on=exp(1s),off=pareto(2s/1.5)", false},
		{"onoff:size=pareto(100kB/1.5),off=exp(1s)", false},
		{"onoff:on=exp(1s),size=10kB", true},
		{"web", false},
		{"web:size=pareto(scale=1kB/1.1),think=exp(2s),objects=4", false},
		{"web:objects=0", true},
		{"cbr:rate=1Mbit,size=1200", false},
		{"cbr:2Mbit", false},
		{"cbr:rate=0", true},
		{"udponoff:rate=5Mbit,on=pareto(1s/1.5),off=exp(2s)", false},
		{"layered:layers=4,base=64kbit", false},
		{"onoff:on=exp(1s),speed=3", true},
		{"onoff:on=fast", true},
		{"tcp", true},
	}
	for _, tc := range tests {
		_, err := New(tc.spec, Env{})
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error got %v, want error %v", tc.spec, err, tc.wantErr)
		}
	}
}

func TestGreedy(t *testing.T) {
	g := mustNew(t, "greedy:bytes=1MB,start=2s", 1, "g").(StreamGen)
	tr, ok := g.NextTransfer(clock.Start)
	if !ok || tr.Bytes != 1e6 || tr.Start != clock.Start.Add(2*time.Second) || tr.Duration != 0 {
		t.Errorf("first transfer got %+v ok=%v, want 1e6 bytes at start+2s", tr, ok)
	}
	if _, ok := g.NextTransfer(tr.Start); ok {
		t.Errorf("second transfer: got ok, want none")
	}
}

// TestCBR: exact spacing and long-run rate.
func TestCBR(t *testing.T) {
	g := mustNew(t, "cbr:rate=1.2Mbit,size=1000,start=1s,stop=11s", 1, "c").(DatagramGen)
	now := clock.Start
	var times []clock.Time
	bytes := 0
	for {
		at, size := g.NextDatagram(now)
		if at == clock.Never {
			break
		}
		times = append(times, at)
		bytes += size
		now = at
	}
	// 10 s at 1.2 Mbit/s with 1000-byte datagrams: one every 6.666.. ms, 1500 datagrams.
	if len(times) != 1500 {
		t.Errorf("datagrams got %d, want 1500", len(times))
	}
	if times[0] != clock.Start.Add(time.Second) {
		t.Errorf("first at got %v, want start+1s", times[0])
	}
	for i := 1; i < len(times); i++ {
		gap := times[i].Sub(times[i-1])
		if gap < 6666666 || gap > 6666668 {
			t.Fatalf("gap %d got %v, want 6.666667ms", i, gap)
		}
	}
	if rate := float64(bytes) * 8 / 10; math.Abs(rate-1.2e6) > 1e3 {
		t.Errorf("rate got %v, want 1.2e6", rate)
	}
}

// TestUDPOnOffRate: the long-run rate is rate·E[on]/(E[on]+E[off]). With
// ~5,000 ON/OFF cycles the ratio's standard error is about 1%; tolerance 5%.
func TestUDPOnOffRate(t *testing.T) {
	g := mustNew(t, "udponoff:rate=1Mbit,size=1000,on=exp(1s),off=exp(3s)", 3, "u").(DatagramGen)
	now := clock.Start
	end := clock.Start.Add(20000 * time.Second)
	bytes := 0
	for {
		at, size := g.NextDatagram(now)
		if at < now {
			t.Fatalf("time went backwards: %v after %v", at, now)
		}
		if at > end {
			break
		}
		bytes += size
		now = at
	}
	rate := float64(bytes) * 8 / 20000
	want := 1e6 * 1.0 / 4.0
	if math.Abs(rate-want) > 0.05*want {
		t.Errorf("mean rate got %.0f bit/s, want %.0f ±5%%", rate, want)
	}
}

// TestOnOffMoments: OFF and ON draws match their distributions' means (±3%
// over 50,000 periods, standard error about 0.5%).
func TestOnOffMoments(t *testing.T) {
	g := mustNew(t, "onoff:on=exp(2s),off=pareto(1s/3)", 5, "o").(StreamGen)
	now := clock.Start
	var on, off float64
	const n = 50000
	for range n {
		tr, ok := g.NextTransfer(now)
		if !ok || tr.Bytes != 0 || tr.Start != now.Add(tr.Idle) {
			t.Fatalf("transfer got %+v ok=%v, want an unlimited ON period starting Idle after now", tr, ok)
		}
		on += tr.Duration.Seconds()
		off += tr.Idle.Seconds()
		now = tr.Start.Add(tr.Duration)
	}
	if m := on / n; math.Abs(m-2) > 0.06 {
		t.Errorf("mean ON got %.3f s, want 2 s ±3%%", m)
	}
	if m := off / n; math.Abs(m-1) > 0.03 {
		t.Errorf("mean OFF got %.3f s, want 1 s ±3%%", m)
	}
}

func TestWeb(t *testing.T) {
	g := mustNew(t, "web:size=pareto(20kB/2.5),think=exp(1s),objects=3,count=20000", 9, "w").(StreamGen)
	now := clock.Start
	var sum float64
	n := 0
	for {
		tr, ok := g.NextTransfer(now)
		if !ok {
			break
		}
		if first := n%3 == 0; first != (tr.Idle != 0) {
			t.Fatalf("object %d: think time %v, want one only before a page's first object", n, tr.Idle)
		}
		sum += float64(tr.Bytes)
		n++
		now = tr.Start.Add(time.Millisecond)
	}
	if n != 60000 {
		t.Errorf("objects got %d, want 3·20000", n)
	}
	if m := sum / float64(n); math.Abs(m-20000) > 0.02*20000 {
		t.Errorf("mean object size got %.0f, want 20000 ±2%%", m)
	}
}

// TestDeterminism: same seed and name, same sequence; another seed, another one.
func TestDeterminism(t *testing.T) {
	specs := []string{"onoff:on=exp(1s),off=exp(1s)", "web", "udponoff:rate=1Mbit", "cbr:rate=1Mbit,phase"}
	seq := func(spec string, seed uint64) []int64 {
		g := mustNew(t, spec, seed, "flow3")
		now := clock.Start
		var out []int64
		for range 200 {
			switch g := g.(type) {
			case StreamGen:
				tr, _ := g.NextTransfer(now)
				out = append(out, int64(tr.Start), tr.Bytes, int64(tr.Duration))
				now = tr.Start.Add(time.Second)
			case DatagramGen:
				at, size := g.NextDatagram(now)
				out = append(out, int64(at), int64(size))
				now = at
			}
		}
		return out
	}
	for _, s := range specs {
		if !slices.Equal(seq(s, 1), seq(s, 1)) {
			t.Errorf("%s: same seed gave different sequences", s)
		}
		if slices.Equal(seq(s, 1), seq(s, 2)) {
			t.Errorf("%s: different seeds gave the same sequence", s)
		}
	}
}

// TestCommonRandomNumbers: a generator's sample path (idle periods, sizes,
// ON lengths) does not depend on the times the driver passes in (how fast the
// network served earlier transfers), nor on other generators built from the
// same seed, nor on their configuration.
func TestCommonRandomNumbers(t *testing.T) {
	path := func(g StreamGen, serve time.Duration) []int64 {
		now := clock.Start
		var out []int64
		for range 500 {
			tr, _ := g.NextTransfer(now)
			out = append(out, int64(tr.Idle), tr.Bytes, int64(tr.Duration))
			now = tr.Start.Add(serve)
		}
		return out
	}
	const spec = "onoff:size=pareto(50kB/1.5),off=exp(1s)"
	a := mustNew(t, spec, 11, "flow1").(StreamGen)
	base := path(a, time.Second)

	// Same flow, slower network (transfers take 7 s instead of 1 s), and a
	// neighbour with a different workload drawing from its own stream in between.
	b := mustNew(t, spec, 11, "flow1").(StreamGen)
	other := mustNew(t, "web:size=pareto(1MB/1.1),think=exp(10ms)", 11, "flow0").(StreamGen)
	var got []int64
	now := clock.Start
	for range 500 {
		other.NextTransfer(now)
		other.NextTransfer(now)
		tr, _ := b.NextTransfer(now)
		got = append(got, int64(tr.Idle), tr.Bytes, int64(tr.Duration))
		now = tr.Start.Add(7 * time.Second)
	}
	if !slices.Equal(base, got) {
		t.Errorf("flow1's sample path changed when the network or a neighbour changed")
	}
	if slices.Equal(base, path(mustNew(t, spec, 11, "flow2").(StreamGen), time.Second)) {
		t.Errorf("flow2 has the same sample path as flow1, want independent streams")
	}
}

func TestLayered(t *testing.T) {
	mk := func() *Layered {
		return mustNew(t, "layered:layers=4,base=100kbit,factor=2,join=1s,joinmax=64s,detect=500ms,threshold=0.1", 1, "l").(*Layered)
	}
	t.Run("joins all layers without loss", func(t *testing.T) {
		l := mk()
		now := clock.Start
		l.NextDatagram(now)
		for range 200 {
			now = now.Add(100 * time.Millisecond)
			l.Feedback(now, 10, 0)
		}
		if l.Level() != 4 {
			t.Errorf("level got %d, want 4", l.Level())
		}
		if want := 100e3 * 15; l.Rate() != want {
			t.Errorf("rate got %v, want %v (1+2+4+8 layers of 100 kbit/s)", l.Rate(), want)
		}
	})
	t.Run("drops to one layer under heavy loss", func(t *testing.T) {
		l := mk()
		now := clock.Start
		l.NextDatagram(now)
		for range 100 {
			now = now.Add(100 * time.Millisecond)
			l.Feedback(now, 10, 0)
		}
		for range 100 {
			now = now.Add(100 * time.Millisecond)
			l.Feedback(now, 5, 5)
		}
		if l.Level() != 1 {
			t.Errorf("level got %d, want 1", l.Level())
		}
	})
	t.Run("failed join experiment backs off", func(t *testing.T) {
		l := mk()
		now := clock.Start
		l.NextDatagram(now)
		for l.Level() < 2 {
			now = now.Add(10 * time.Millisecond)
			l.Feedback(now, 10, 0)
		}
		now = now.Add(100 * time.Millisecond) // within detect
		l.Feedback(now, 5, 5)
		if l.Level() != 1 {
			t.Errorf("level got %d, want 1 after failed experiment", l.Level())
		}
		if l.timers[2] != 2*time.Second {
			t.Errorf("join timer for layer 2 got %v, want 2s (1s doubled)", l.timers[2])
		}
	})
	t.Run("send spacing follows rate", func(t *testing.T) {
		l := mk()
		a, _ := l.NextDatagram(clock.Start)
		b, size := l.NextDatagram(a)
		if want := time.Duration(float64(size) * 8 / 100e3 * 1e9); b.Sub(a) != want {
			t.Errorf("gap got %v, want %v", b.Sub(a), want)
		}
	})
}

func BenchmarkCBR(b *testing.B) {
	g, _ := NewCBR(CBRConfig{Rate: 1e6, Size: 1000}, nil)
	now := clock.Start
	b.ReportAllocs()
	for range b.N {
		now, _ = g.NextDatagram(now)
	}
}

// TestCBRRandom: with random (ns-2's random_) every gap lies in
// [RandomLow, RandomHigh) intervals, the gaps vary, and the long-run rate is
// the configured one (20,000 gaps of standard deviation 0.29 interval: the
// mean gap's standard error is 0.2 %; tolerance 1 %).
func TestCBRRandom(t *testing.T) {
	g := mustNew(t, "cbr:rate=10Mbit,size=1000,random", 5, "c").(DatagramGen)
	const interval = 800 * time.Microsecond
	const n = 20000
	now := clock.Start
	first, _ := g.NextDatagram(now)
	prev, distinct := first, map[time.Duration]bool{}
	for i := 0; i < n; i++ {
		at, size := g.NextDatagram(prev)
		if size != 1000 {
			t.Fatalf("size got %d, want 1000", size)
		}
		gap := at.Sub(prev)
		if lo, hi := time.Duration(RandomLow*float64(interval)), time.Duration(RandomHigh*float64(interval)); gap < lo-1 || gap > hi+1 {
			t.Fatalf("gap %d got %v, want within [%v, %v)", i, gap, lo, hi)
		}
		distinct[gap] = true
		prev = at
	}
	if len(distinct) < n/2 {
		t.Errorf("distinct gaps got %d of %d, want most of them distinct", len(distinct), n)
	}
	mean := prev.Sub(first) / n
	if d := math.Abs(float64(mean-interval)) / float64(interval); d > 0.01 {
		t.Errorf("mean gap got %v, want %v within 1%%", mean, interval)
	}
}
