package metrics

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
)

// at returns clock.Start + s seconds.
func at(s float64) clock.Time { return clock.Start.Add(time.Duration(s * 1e9)) }

func ms(x float64) time.Duration { return time.Duration(x * 1e6) }

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestFlowCompletionTime(t *testing.T) {
	info := RunInfo{Start: at(0), End: at(10), Interval: time.Second,
		Flows: []FlowInfo{{ID: 7, Size: 3000}}}
	ev := []event.Event{
		{Time: at(1), Kind: event.PacketSent, Flow: 7, Bytes: 1500},
		{Time: at(1.5), Kind: event.PacketSent, Flow: 7, Bytes: 1500},
		{Time: at(2), Kind: event.Delivered, Flow: 7, Bytes: 1500},
		{Time: at(3), Kind: event.Delivered, Flow: 7, Bytes: 1500},
	}
	m := Compute(info, ev)
	f := m.Flows[0]
	if got, _ := f.Get("fct"); !near(got, 2) {
		t.Errorf("fct: got %v, want 2 (1 s → 3 s)", got)
	}
	// Throughput over the active time 1 s → 3 s, not the whole window.
	if got := f.Values["mean_throughput"]; !near(got, 3000*8/2.0) {
		t.Errorf("mean_throughput: got %v, want %v", got, 3000*8/2.0)
	}
	// An incomplete sized flow has no completion time.
	info.Flows[0].Size = 4000
	if _, ok := Compute(info, ev).Flows[0].Get("fct"); ok {
		t.Errorf("fct present for an incomplete flow")
	}
}

func TestJainIndex(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1}, 1},
		{[]float64{1, 0}, 0.5},
		{[]float64{5, 0, 0, 0}, 0.25},
		{[]float64{1, 2, 3}, 36.0 / 42},
		{nil, 0},
	}
	for _, c := range cases {
		if got := JainIndex(c.xs); !near(got, c.want) {
			t.Errorf("JainIndex(%v): got %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestCongestionEpochs(t *testing.T) {
	cases := []struct {
		name     string
		lens     []int
		limit    int
		fraction float64
		want     float64
	}{
		{"sawtooth", []int{0, 20, 0, 20, 0, 20}, 20, 0, 3},
		{"never drains to θ/2", []int{0, 20, 6, 20, 6, 20}, 20, 0, 1},
		{"drains to θ/2", []int{0, 20, 5, 20, 5, 20}, 20, 0, 3},
		{"never above θ", []int{0, 8, 0, 10, 0}, 20, 0, 0},
		{"wiggle at θ is one epoch", []int{0, 10, 11, 10, 11, 10, 11, 4}, 20, 0, 1},
		{"threshold parameter", []int{0, 8, 0, 8, 0}, 20, 0.25, 2},
		{"limit from max seen", []int{0, 8, 0, 8}, 0, 0, 2},
	}
	for _, c := range cases {
		info := RunInfo{Start: at(0), End: at(100), Interval: time.Second,
			Links: []LinkInfo{{Index: 0, QueueLimit: c.limit, EpochThreshold: c.fraction}}}
		var ev []event.Event
		for i, v := range c.lens {
			ev = append(ev, event.Event{Time: at(float64(i)), Kind: event.Enqueue, QueueLen: v})
		}
		got := Compute(info, ev).Links[0].Values["total_queue_oscillations"]
		if got != c.want {
			t.Errorf("%s: got %v epochs, want %v", c.name, got, c.want)
		}
	}
}

// TestWarmupHoldsState: a warm-up excludes events from the metrics, but the
// state they set (cwnd, srtt, queue length) holds into the window, and an
// epoch in progress when the window begins is not counted.
func TestWarmupHoldsState(t *testing.T) {
	info := RunInfo{Start: at(1), End: at(3), Interval: time.Second,
		Links: []LinkInfo{{Index: 0, QueueLimit: 10}}}
	ev := []event.Event{
		{Time: at(0), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 1000, SRTT: ms(10), MinRTT: ms(5)},
		{Time: at(0.5), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000},
		{Time: at(0.5), Kind: event.Enqueue, Link: 0, QueueLen: 8},
		{Time: at(2), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 3000, SRTT: ms(30), MinRTT: ms(5)},
		{Time: at(2), Kind: event.Dequeue, Link: 0, QueueLen: 0},
		{Time: at(2.5), Kind: event.Enqueue, Link: 0, QueueLen: 6},
		{Time: at(2.5), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 500},
	}
	m := Compute(info, ev)
	f, l := m.Flows[0].Values, m.Links[0].Values
	want := map[string]float64{
		"mean_cwnd": 2000, "mean_srtt": 0.020, "total_packets_sent": 1, "total_sent": 500,
	}
	for k, w := range want {
		if !near(f[k], w) {
			t.Errorf("flow %s: got %v, want %v", k, f[k], w)
		}
	}
	// Queue: 8 held for 1 s, 0 for 0.5 s, 6 for 0.5 s; one epoch (6 > 5), the one in progress at 1 s not counted.
	lwant := map[string]float64{"mean_queue_len": (8 + 0 + 3) / 2.0, "max_queue_len": 8, "total_queue_oscillations": 1}
	for k, w := range lwant {
		if !near(l[k], w) {
			t.Errorf("link %s: got %v, want %v", k, l[k], w)
		}
	}
}

// TestCatalogDocumented checks docs/metrics.md names every metric and series.
func TestCatalogDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatalf("reading docs/metrics.md: %v", err)
	}
	doc := string(b)
	for _, d := range Catalog {
		if !strings.Contains(doc, "`"+d.Name+"`") {
			t.Errorf("docs/metrics.md does not list metric %s", d.Name)
		}
	}
	for _, d := range seriesCatalog {
		if !strings.Contains(doc, "`"+d.Name+"`") {
			t.Errorf("docs/metrics.md does not list series %s", d.Name)
		}
	}
}

func TestUnitOf(t *testing.T) {
	cases := []struct {
		scope      Scope
		name, want string
	}{
		{ScopeFlow, "mean_throughput", "bit/s"},
		{ScopeLink, "total_drops_overflow", "packet"},
		{ScopeFlow, "total_rtos_burst_loss", "1"},
		{ScopeNetwork, "jain_fairness", "1"},
		{ScopeFlow, "nonsense", ""},
	}
	for _, c := range cases {
		if got := UnitOf(c.scope, c.name); got != c.want {
			t.Errorf("UnitOf(%s, %s): got %q, want %q", c.scope, c.name, got, c.want)
		}
	}
}

func BenchmarkCollector(b *testing.B) {
	info := RunInfo{Start: at(0), Interval: 100 * time.Millisecond,
		Links: []LinkInfo{{Index: 0, Rate: 16e6, QueueLimit: 20}}}
	c := NewCollector(info)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tm := at(float64(i%100000) * 1e-5)
		c.Record(&event.Event{Time: tm, Kind: event.PacketSent, Flow: 1, Bytes: 1200})
		c.Record(&event.Event{Time: tm, Kind: event.Enqueue, Flow: 1, Link: 0, QueueLen: i % 20})
		c.Record(&event.Event{Time: tm, Kind: event.MetricsUpdated, Flow: 1, Cwnd: 1200 * (i % 50), SRTT: ms(20)})
	}
}

// TestSparseCounter: per-interval sums kept sparsely, in or out of order,
// come out as the dense counter.
func TestSparseCounter(t *testing.T) {
	var c sparseCounter
	for _, a := range []struct {
		k int
		x float64
	}{{3, 1}, {1, 2}, {3, 4}, {5, 8}, {1, 16}, {-1, 32}, {0, 64}} {
		c.add(a.k, a.x)
	}
	got, want := c.dense(), counterSeries{64, 18, 0, 5, 0, 8}
	if len(got) != len(want) {
		t.Fatalf("dense: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("dense: got %v, want %v", got, want)
		}
	}
}

// TestSeconds: seconds gives d.Seconds() bit for bit, on both sides of one
// second and for negative durations.
func TestSeconds(t *testing.T) {
	ds := []time.Duration{0, 1, 2, 999, 1e6 - 1, 1e6, 123456789, time.Second - 1, time.Second, time.Second + 1,
		2*time.Second - 1, 90 * time.Minute, -1, -time.Second, math.MaxInt64, math.MinInt64}
	for d := time.Duration(1); d < 1<<60; d = d*7/4 + 3 {
		ds = append(ds, d, d-1, d+1)
	}
	for _, d := range ds {
		if got, want := seconds(d), d.Seconds(); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("seconds(%d): got %v, want %v", int64(d), got, want)
		}
	}
}

// TestSampleAccZeros: addZeros(n) leaves the accumulator bit for bit as n
// samples 0 added one by one do.
func TestSampleAccZeros(t *testing.T) {
	var a, b sampleAcc
	for i, x := range []float64{3.5, 0, 1e6, 7, 0.25, 12345.678, 0, 42} {
		a.add(-1, x)
		b.add(-1, x)
		n := i*i + 1
		a.addZeros(n)
		for range n {
			b.add(-1, 0)
		}
		if a.n != b.n || math.Float64bits(a.mean) != math.Float64bits(b.mean) || math.Float64bits(a.m2) != math.Float64bits(b.m2) {
			t.Fatalf("addZeros gives n %d mean %v m2 %v, add(-1, 0) n %d mean %v m2 %v",
				a.n, a.mean, a.m2, b.n, b.mean, b.m2)
		}
	}
}

// TestThroughputVariance: var_throughput and cov_throughput are the
// population variance (Welford, in interval order) of the flow's throughput
// over every interval from its first packet to its stop, intervals without
// deliveries counted as 0 — computed here interval by interval.
func TestThroughputVariance(t *testing.T) {
	const iv = 100 * time.Millisecond
	info := RunInfo{Start: at(1), End: at(9), Interval: iv,
		Flows: []FlowInfo{{ID: 1, Stop: at(8.45)}}}
	ev := []event.Event{{Time: at(2.33), Kind: event.PacketSent, Flow: 1, Bytes: 1000}}
	perInterval := map[int]float64{} // bytes delivered per interval of the window
	for i, s := range []float64{0.5, 2.35, 2.36, 2.9, 3.0, 4.44, 4.45, 6.01, 7.99, 8.02, 8.5} {
		bytes := 1000 * (i + 1)
		ev = append(ev, event.Event{Time: at(s), Kind: event.Delivered, Flow: 1, Bytes: bytes})
		if s >= 1 {
			perInterval[int(at(s).Sub(at(1))/iv)] += float64(bytes)
		}
	}
	var want sampleAcc
	for k := int(at(2.33).Sub(at(1)) / iv); k <= int(at(8.45).Add(-1).Sub(at(1))/iv); k++ {
		want.add(-1, perInterval[k]*8/iv.Seconds())
	}
	v := Compute(info, ev).Flows[0].Values
	if got := v["var_throughput"]; math.Float64bits(got) != math.Float64bits(want.variance()) {
		t.Errorf("var_throughput: got %v, want %v", got, want.variance())
	}
	if got, w := v["cov_throughput"], math.Sqrt(want.variance())/want.mean; got != w {
		t.Errorf("cov_throughput: got %v, want %v", got, w)
	}
}

// TestSetEndAfterEvents: events after a window end set late (SetEnd, once
// events have been measured) are ignored.
func TestSetEndAfterEvents(t *testing.T) {
	c := NewCollector(RunInfo{Start: at(0), End: clock.Never})
	c.Record(&event.Event{Time: at(1), Kind: event.PacketSent, Flow: 1, Bytes: 100})
	c.Record(&event.Event{Time: at(2), Kind: event.PacketSent, Flow: 1, Bytes: 200})
	c.SetEnd(at(2))
	c.Record(&event.Event{Time: at(3), Kind: event.PacketSent, Flow: 1, Bytes: 400})
	m := c.Finish()
	if got := m.Flows[0].Values["total_sent"]; got != 300 {
		t.Errorf("total_sent: got %v, want 300 (the event after the end ignored)", got)
	}
	if m.End != at(2) {
		t.Errorf("end: got %v, want %v", m.End, at(2))
	}
}

// TestWarmupRTTSamples: RTT samples taken before the window (warm-up) are
// not in the RTT percentiles, as sojourn times then are not in the queue
// delay's; the minimum RTT, a state, carries into the window.
func TestWarmupRTTSamples(t *testing.T) {
	info := RunInfo{Start: at(1), End: at(3)}
	ev := []event.Event{
		{Time: at(0.2), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 1000, SRTT: ms(500), RTT: ms(500), MinRTT: ms(5)},
		{Time: at(0.4), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 1000, SRTT: ms(500), RTT: ms(500), MinRTT: ms(5)},
		{Time: at(0.6), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 1000, SRTT: ms(500), RTT: ms(500), MinRTT: ms(5)},
		{Time: at(0.6), Kind: event.Dequeue, Link: 0, Sojourn: ms(300)},
		{Time: at(1.5), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000},
		{Time: at(2), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 1000, SRTT: ms(20), RTT: ms(10), MinRTT: ms(10)},
		{Time: at(2), Kind: event.Dequeue, Link: 0, Sojourn: ms(1)},
	}
	m := Compute(info, ev)
	f, n, l := m.Flows[0].Values, m.Network.Values, m.Links[0].Values
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"flow p50_rtt", f["p50_rtt"], 0.010}, {"flow p99_rtt", f["p99_rtt"], 0.010},
		{"network p50_rtt", n["p50_rtt"], 0.010}, {"link p99_queue_delay", l["p99_queue_delay"], 0.001},
		{"flow min_rtt", f["min_rtt"], 0.005},
	} {
		if math.Abs(c.got-c.want) > sketchAlpha*c.want {
			t.Errorf("%s: got %v, want %v (within %.1f %%)", c.name, c.got, c.want, 100*sketchAlpha)
		}
	}
}

// TestObserveFlow: ObserveFlow(e, n) measures exactly what Observe of a
// copy of *e with Flow n does (events before, in and after the window,
// queue events, with and without a packet trace and series), and leaves
// *e as it was.
func TestObserveFlow(t *testing.T) {
	var ev []event.Event
	for i := range 400 {
		tm := at(0.01 * float64(i))
		ev = append(ev,
			event.Event{Time: tm, Kind: event.PacketSent, Flow: 77, Link: -1, Seq: uint64(i), Bytes: 1200},
			event.Event{Time: tm, Kind: event.MetricsUpdated, Flow: 77, Link: -1, Cwnd: 1200 * (1 + i%40), InFlight: 600 * (i % 30),
				SRTT: ms(20 + float64(i%7)), RTT: ms(18 + float64(i%11)), MinRTT: ms(15)},
			event.Event{Time: tm, Kind: event.Enqueue, Flow: 77, Link: 0, QueueLen: i % 9},
			event.Event{Time: tm, Kind: event.Drop, Flow: 77, Link: 0, QueueLen: i % 9, Reason: uint8(qdisc.DropOverflow)},
			event.Event{Time: tm.Add(ms(5)), Kind: event.PacketAcked, Flow: 77, Link: -1, Seq: uint64(i), Bytes: 1200},
			event.Event{Time: tm.Add(ms(6)), Kind: event.Delivered, Flow: 77, Link: -1, Bytes: 1200})
	}
	for _, c := range []struct {
		name string
		info RunInfo
	}{
		{"window", RunInfo{Start: at(1), End: at(3)}},
		{"series", RunInfo{Start: at(0.5), End: at(2), Interval: 250 * time.Millisecond}},
		{"trace", RunInfo{Start: at(1), End: at(3), NoSeries: true, Trace: &TraceWindow{Flow: 5, From: at(1), To: at(2)}}},
		{"no window", RunInfo{Start: clock.Never, End: clock.Never}},
	} {
		a, b := NewCollector(c.info), NewCollector(c.info)
		for i := range ev {
			e := ev[i]
			a.ObserveFlow(&e, 5)
			if e != ev[i] {
				t.Fatalf("%s: ObserveFlow changed the event: got %+v, want %+v", c.name, e, ev[i])
			}
			e.Flow = 5
			b.Observe(&e)
		}
		if got, want := a.Finish(), b.Finish(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ObserveFlow's metrics differ from Observe's:\ngot  %+v\nwant %+v", c.name, got, want)
		}
	}
}

// TestWarmupHeldSenderStateOnly: a flow whose sender state (cwnd, bytes in
// flight, srtt) was last set during the warm-up and stays constant across
// the window's start, with no MetricsUpdated inside the window, has that
// state as its time-weighted mean over the window, and in every interval of
// its series: by the definition, ∫v dt / window = v·(End−Start)/(End−Start).
func TestWarmupHeldSenderStateOnly(t *testing.T) {
	info := RunInfo{Start: at(1), End: at(3), Interval: time.Second}
	ev := []event.Event{
		{Time: at(0.2), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 5000, InFlight: 4000, SRTT: ms(90), MinRTT: ms(5)},
		{Time: at(0.5), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 12000, InFlight: 9000, SRTT: ms(40), MinRTT: ms(5)},
		{Time: at(1.5), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000},
	}
	m := Compute(info, ev)
	f := m.Flows[0]
	for _, c := range []struct {
		name string
		want float64
	}{{"mean_cwnd", 12000}, {"var_cwnd", 0}, {"mean_inflight", 9000}, {"mean_srtt", 0.040}, {"var_srtt", 0}} {
		if got, ok := f.Get(c.name); !ok || !near(got, c.want) {
			t.Errorf("%s: got %v (present %v), want %v", c.name, got, ok, c.want)
		}
	}
	for _, s := range f.Series {
		want := map[string]float64{"cwnd": 12000, "inflight": 9000, "srtt": 0.040}[s.Name]
		if want == 0 {
			continue
		}
		if len(s.V) != 2 {
			t.Errorf("series %s: got %d points, want 2 (both intervals of the window)", s.Name, len(s.V))
		}
		for i, v := range s.V {
			if !near(v, want) {
				t.Errorf("series %s[%d]: got %v, want %v", s.Name, i, v, want)
			}
		}
	}
}

// TestSparseCounterGrowth: a counter of many intervals doubles its room as
// it grows (append grows a long slice by a quarter, copying it about four
// times as often), and keeps every sum.
func TestSparseCounterGrowth(t *testing.T) {
	const n = 100000
	var c sparseCounter
	allocs := testing.AllocsPerRun(1, func() {
		c = nil
		for k := range n {
			c.add(k, float64(k))
		}
	})
	if want := math.Log2(n / sparseFirst); allocs > want+1 {
		t.Errorf("%d intervals: %v allocations, want at most %v", n, allocs, want+1)
	}
	if len(c) != n || c[n-1] != (sparseSum{n - 1, n - 1}) {
		t.Errorf("got %d sums, the last %+v, want %d, the last {%d %d}", len(c), c[len(c)-1], n, n-1, n-1)
	}
}

// TestLinkSlots: links whose indices share their low byte (3, 259, -253)
// or are negative keep accumulators of their own, whichever of them holds
// the looked-up slot, and an index equal to an empty slot's marker (1 for
// slot 0) is a link like any other.
func TestLinkSlots(t *testing.T) {
	links := []int32{3, 259, -253, -1, 1, 0, 256}
	var ev []event.Event
	for i, l := range links {
		for n := 0; n <= i; n++ { // link links[i] takes i+1 packets
			ev = append(ev, event.Event{Time: at(float64(len(ev)) * 1e-3), Kind: event.Enqueue, Link: l, QueueLen: 1, Bytes: 100})
		}
	}
	m := Compute(RunInfo{Start: at(0), NoSeries: true}, ev)
	got := map[int64]float64{}
	for _, r := range m.Links {
		got[r.ID] = r.Values["total_enqueued"]
	}
	for i, l := range links {
		if got[int64(l)] != float64(i+1) {
			t.Errorf("link %d: got total_enqueued %v, want %d (all: %v)", l, got[int64(l)], i+1, got)
		}
	}
	if len(m.Links) != len(links) {
		t.Errorf("got %d links, want %d", len(m.Links), len(links))
	}
}
