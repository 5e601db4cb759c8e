package transport

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// plpmtudPath drives a plpmtud over a fake path with a fake clock: a probe
// of at most mtu bytes is acknowledged one rtt after it is sent, a larger
// one is lost; the probe timer is the rtt times 3 (a stand-in RTO).
type plpmtudPath struct {
	d      plpmtud
	now    clock.Time
	mtu    int
	rtt    time.Duration
	nextID uint64
	sizes  []int // probe sizes in the order sent
}

// newPlpmtudPath starts a search up to max bytes on a path of mtu bytes to
// a peer reached over IPv6 (the table's 1452 and 8952).
func newPlpmtudPath(max, mtu int) *plpmtudPath { return newPlpmtudPathFamily(max, mtu, false) }

// newPlpmtudPathFamily is newPlpmtudPath for a peer over IPv4 (v4) or IPv6.
func newPlpmtudPathFamily(max, mtu int, v4 bool) *plpmtudPath {
	p := &plpmtudPath{now: clock.Time(time.Second), mtu: mtu, rtt: 10 * time.Millisecond, nextID: 1}
	p.d.start(basePLPMTU, max, v4)
	return p
}

// step sends the due probe (if any) and lets the path answer it, or runs
// the timers at their deadline; it reports false when nothing is left to
// do before the raise timer.
func (p *plpmtudPath) step(t *testing.T) bool {
	if n := p.d.probeSize(); n > 0 {
		id := p.nextID
		p.nextID++
		p.sizes = append(p.sizes, n)
		p.d.sent(p.now, id, 3*p.rtt)
		if n <= p.mtu {
			p.now = p.now.Add(p.rtt)
			p.d.acked(p.now, id)
		}
		return true
	}
	if p.d.probeAt == clock.Never {
		return false
	}
	p.now = p.d.probeAt
	p.d.onTimer(p.now)
	return true
}

func (p *plpmtudPath) run(t *testing.T) {
	for i := 0; p.step(t); i++ {
		if i > 1000 {
			t.Fatalf("search did not end: probes %v", p.sizes)
		}
	}
}

// TestPLPMTUDConfirmRaises: each acknowledged probe raises the size to the
// probed one (RFC 8899 §5.2 SEARCHING); on a path that carries everything
// the search walks the step table of the peer's family and MAX_PLPMTU, one
// probe each, then completes.
func TestPLPMTUDConfirmRaises(t *testing.T) {
	for _, tc := range []struct {
		v4   bool
		want []int
	}{
		{v4: true, want: []int{1472, 8972, 65507}},
		{v4: false, want: []int{1452, 8952, 65507}},
	} {
		confirmRaises(t, newPlpmtudPathFamily(65507, 65507, tc.v4), tc.want)
	}
}

// confirmRaises checks that p's search confirms the sizes want in turn.
func confirmRaises(t *testing.T, p *plpmtudPath, want []int) {
	t.Helper()
	if got, want := p.d.size, basePLPMTU; got != want {
		t.Fatalf("size at start = %d, want BASE_PLPMTU %d", got, want)
	}
	for i, w := range want {
		if !p.step(t) {
			t.Fatalf("step %d: no probe", i)
		}
		if got := p.d.size; got != w {
			t.Errorf("after probe %d: size = %d, want %d (confirmed probe size)", i, got, w)
		}
	}
	if got, want := p.d.phase, plpmtudComplete; got != want {
		t.Errorf("phase = %v, want %v", got, want)
	}
	if got := p.d.probeSize(); got != 0 {
		t.Errorf("probe due after SEARCH_COMPLETE: %d bytes", got)
	}
}

// TestPLPMTUDMaxProbes: a size is probed MAX_PROBES times, PROBE_TIMER
// apart, then given up; with no size left between the confirmed one and
// the failed one the search ends at the confirmed size.
func TestPLPMTUDMaxProbes(t *testing.T) {
	p := newPlpmtudPath(1472, 1460)
	p.run(t)
	if got, want := p.sizes, []int{1452, 1472, 1472, 1472}; !slices.Equal(got, want) {
		t.Errorf("probes = %v, want %v (1472 sent MAX_PROBES=%d times)", got, want, PLPMTUDMaxProbes)
	}
	if got, want := p.d.phase, plpmtudComplete; got != want {
		t.Errorf("phase = %v, want %v", got, want)
	}
	if got, want := p.d.size, 1452; got != want {
		t.Errorf("size = %d, want %d", got, want)
	}
	if got, want := p.d.lost, uint64(1); got != want {
		t.Errorf("sizes given up = %d, want %d", got, want)
	}
	if got, want := p.d.raiseAt, p.now.Add(PMTURaiseTimer); got != want {
		t.Errorf("PMTU_RAISE_TIMER at %v, want %v (600 s after the search ended)", got, want)
	}
}

// TestPLPMTUDSearchFinds: the search ends within plpmtudGranularity below
// the path's size, whatever it is, and never above it.
func TestPLPMTUDSearchFinds(t *testing.T) {
	for _, mtu := range []int{1200, 1300, 1452, 1472, 1500, 4000, 8972, 9000, 20000, 65507} {
		p := newPlpmtudPath(65507, mtu)
		p.run(t)
		if got := p.d.size; got > mtu || got <= mtu-plpmtudGranularity {
			t.Errorf("path %d: size = %d, want (%d, %d] (probes %v)", mtu, got, mtu-plpmtudGranularity, mtu, p.sizes)
		}
		if p.d.phase != plpmtudComplete {
			t.Errorf("path %d: phase = %v, want SEARCH_COMPLETE", mtu, p.d.phase)
		}
	}
}

// TestPLPMTUDBlackHole: MAX_PROBES consecutive RTOs with full-sized packets
// fall back to BASE_PLPMTU and the BASE state, which a probe of the base
// size confirms before searching again; an acknowledgement of new data in
// between restarts the count; at the base size RTOs change nothing.
func TestPLPMTUDBlackHole(t *testing.T) {
	p := newPlpmtudPathFamily(8972, 8972, true)
	p.run(t)
	if p.d.size != 8972 {
		t.Fatalf("size = %d, want 8972", p.d.size)
	}
	p.d.rto(p.now)
	p.d.rto(p.now)
	p.d.progress()
	if p.d.rto(p.now) || p.d.size != 8972 {
		t.Fatalf("size %d after RTO, progress, RTO: want 8972 (no black hole)", p.d.size)
	}
	p.d.rto(p.now)
	if !p.d.rto(p.now) {
		t.Fatalf("no size change after %d consecutive RTOs", PLPMTUDMaxProbes)
	}
	if got, want := p.d.size, basePLPMTU; got != want {
		t.Errorf("size after black hole = %d, want BASE_PLPMTU %d", got, want)
	}
	if got, want := p.d.phase, plpmtudBase; got != want {
		t.Errorf("phase = %v, want %v", got, want)
	}
	if got, want := p.d.probeSize(), basePLPMTU; got != want {
		t.Errorf("probe due = %d bytes, want BASE_PLPMTU %d", got, want)
	}
	p.mtu = 1472 // the path shrank
	p.run(t)
	if got, want := p.d.size, 1472; got != want {
		t.Errorf("size after the new search = %d, want %d", got, want)
	}
	d := plpmtud{}
	d.start(basePLPMTU, basePLPMTU, false)
	for i := 0; i < 2*PLPMTUDMaxProbes; i++ {
		if d.rto(0) {
			t.Fatalf("RTO at the base size changed the size")
		}
	}
}

// TestPLPMTUDBaseError: a base probe lost MAX_PROBES times leaves BASE for
// ERROR, where BASE_PLPMTU is still used and probed per PROBE_TIMER; its
// acknowledgement leads back to SEARCHING.
func TestPLPMTUDBaseError(t *testing.T) {
	p := newPlpmtudPath(8972, 8972)
	p.run(t)
	for i := 0; i < PLPMTUDMaxProbes; i++ {
		p.d.rto(p.now)
	}
	p.mtu = 1000 // nothing gets through
	for i := 0; i < PLPMTUDMaxProbes*2; i++ {
		p.step(t)
	}
	if got, want := p.d.phase, plpmtudError; got != want {
		t.Fatalf("phase = %v, want %v after %d lost base probes", got, want, PLPMTUDMaxProbes)
	}
	if got, want := p.d.size, basePLPMTU; got != want {
		t.Errorf("size in ERROR = %d, want %d", got, want)
	}
	p.mtu = 8972
	p.run(t)
	if got, want := p.d.size, 8972; got != want || p.d.phase != plpmtudComplete {
		t.Errorf("after the path came back: size %d phase %v, want %d SEARCH_COMPLETE", got, p.d.phase, want)
	}
}

// TestPLPMTUDRaiseTimer: PMTU_RAISE_TIMER (600 s) after the search ended,
// a search for a larger size starts.
func TestPLPMTUDRaiseTimer(t *testing.T) {
	p := newPlpmtudPathFamily(65507, 1472, true)
	p.run(t)
	at := p.d.deadline()
	if got, want := at, p.now.Add(PMTURaiseTimer); got != want {
		t.Fatalf("deadline = %v, want PMTU_RAISE_TIMER %v", got, want)
	}
	p.d.onTimer(at - 1)
	if p.d.probeSize() != 0 {
		t.Fatalf("probe due before PMTU_RAISE_TIMER")
	}
	p.now = at
	p.d.onTimer(at)
	if got := p.d.probeSize(); got <= 1472 {
		t.Errorf("probe after PMTU_RAISE_TIMER = %d bytes, want > 1472", got)
	}
	p.mtu = 8972
	p.run(t)
	if got, want := p.d.size, 8972; got != want {
		t.Errorf("size after the raise search = %d, want %d", got, want)
	}
}

// TestPLPMTUDLateAck: an answer to an earlier try of the size probed
// confirms it; an answer to a size given up does not.
func TestPLPMTUDLateAck(t *testing.T) {
	d := plpmtud{}
	d.start(basePLPMTU, 1472, false)
	d.sent(0, 1, time.Second)
	d.onTimer(clock.Time(time.Second))
	d.sent(clock.Time(time.Second), 2, time.Second)
	if !d.acked(clock.Time(time.Second), 1) || d.size != 1452 {
		t.Fatalf("late answer to probe 1: size %d, want 1452", d.size)
	}
	if d.acked(clock.Time(time.Second), 2) {
		t.Errorf("a second answer for a confirmed size changed the size")
	}
}

// mtuPath returns a loss-free path model that drops every datagram larger
// than *mtu bytes (a path MTU, as the relay's -mtu).
func mtuPath(mtu *int) pathModel {
	return pathModel{Delay: 10 * time.Millisecond, Rate: 10e6, Drop: func(b []byte) bool { return len(b) > *mtu }}
}

// TestPLPMTUDStream: a stream connection with discovery on a path that
// carries 4000-byte datagrams finds a size within the search granularity
// below it, moves its data in datagrams of that size, and the probes lost
// on the way (larger than the path) cost no congestion response: no loss,
// no recovery, no RTO, ssthresh still arbitrarily high (RFC 8899 §4.4).
func TestPLPMTUDStream(t *testing.T) {
	mtu := 4000
	h := newHarness(t, 1, mtuPath(&mtu), mtuPath(&mtu), Config{PLPMTUMax: 9000})
	largest := 0
	h.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
		var p packet
		if from == 0 && decodePacket(b, &p) == RejectNone && p.typ == typeShort && p.hasData() {
			largest = max(largest, len(b))
		}
		return true
	}
	cli := plpmtudDial(h, 8<<20)
	srv, ok := h.serve(cli, 60*time.Second)
	if !ok {
		t.Fatalf("transfer did not finish: %+v", cli.Stats().PLPMTU)
	}
	checkTransfer(t, cli, srv, 8<<20, 0)
	checkDiscovered(t, cli.Stats(), mtu, largest)
}

// checkDiscovered checks the sender's stats st after a transfer over a
// loss-free path that carries mtu-byte datagrams (mtuPath): the discovered
// size within the search granularity below mtu, the search complete, the
// largest data datagram (bytes) of that size, some probe size given up and
// no congestion response to it (RFC 8899 §4.4).
func checkDiscovered(t *testing.T, st ConnStats, mtu, largest int) {
	t.Helper()
	if got := st.PLPMTU.Size; got > mtu || got <= mtu-plpmtudGranularity {
		t.Errorf("discovered size = %d, want (%d, %d] (%+v after %v, RTO %v)", got, mtu-plpmtudGranularity, mtu, st.PLPMTU, st.Finished.Sub(st.Established), st.RTO)
	}
	if got, want := st.PLPMTU.State, "SEARCH_COMPLETE"; got != want {
		t.Errorf("state = %q, want %q", got, want)
	}
	if largest > st.PLPMTU.Size || largest < st.PLPMTU.Size-maxShortOverhead+shortFixed {
		t.Errorf("largest data datagram = %d bytes, want the discovered %d less at most the varints' spare bytes", largest, st.PLPMTU.Size)
	}
	if st.PLPMTU.ProbesLost == 0 {
		t.Errorf("no probe size given up: the path should have dropped some")
	}
	if st.Lost != 0 || st.Recoveries != 0 || st.RTOs != 0 || st.Ssthresh != ccalgo.InfiniteSsthresh {
		t.Errorf("probe loss reached congestion control: lost %d, recoveries %d, RTOs %d, ssthresh %d",
			st.Lost, st.Recoveries, st.RTOs, st.Ssthresh)
	}
}

// TestPLPMTUDStreamBlackHole: the path's MTU falls under a connection
// that uses 9000-byte datagrams: after MAX_PROBES timeouts it falls back to
// BASE_PLPMTU, retransmits the large segments in pieces, searches again
// and finishes the transfer intact at the new size.
func TestPLPMTUDStreamBlackHole(t *testing.T) {
	mtu := 9000
	h := newHarness(t, 2, mtuPath(&mtu), mtuPath(&mtu), Config{PLPMTUMax: 9000, MaxWindow: 100_000})
	var cli *Conn
	h.beforeTransmit = func(int) {
		if cli != nil && mtu == 9000 && cli.Stats().BytesAcked > 1<<20 {
			mtu = 1400
		}
	}
	c := plpmtudDial(h, 8<<20)
	cli = c
	srv, ok := h.serve(c, 120*time.Second)
	if !ok {
		t.Fatalf("transfer did not finish after the black hole: %+v", c.Stats().PLPMTU)
	}
	checkTransfer(t, c, srv, 8<<20, 0)
	st := c.Stats().PLPMTU
	if st.BlackHoles != 1 {
		t.Errorf("black holes = %d, want 1", st.BlackHoles)
	}
	if st.Size > 1400 || st.Size <= 1400-plpmtudGranularity {
		t.Errorf("size after the black hole = %d, want (%d, 1400] (%+v)", st.Size, 1400-plpmtudGranularity, st)
	}
}

// plpmtudDial opens a connection sending size bytes whose window is capped
// at 50 kB, so that the path's unlimited queue stays short (the probe timer
// is the RTO).
func plpmtudDial(h *harness, size int64) *Conn {
	c, err := h.eps[0].Dial(h.now, h.addrs[1], Config{Request: []byte("bulk"), MaxWindow: 50_000})
	if err != nil {
		h.t.Fatal(err)
	}
	c.SetSource(NewPatternSource(42), size)
	return c
}

// TestPLPMTUDLikelySizes: on a path whose MTU is one of the table's (the
// peer's family's Ethernet or jumbo size) the search ends at exactly that
// size having given up at most two sizes (the next likely one, then the
// one just above), each failure costing MAX_PROBES probe timeouts; plain
// bisection gave up nine on the way down from 8972 to 1472.
func TestPLPMTUDLikelySizes(t *testing.T) {
	for _, tc := range []struct {
		v4  bool
		mtu int
	}{
		{true, 1500 - 28}, {true, 9000 - 28}, {false, 1500 - 48}, {false, 9000 - 48},
	} {
		p := newPlpmtudPathFamily(65507, tc.mtu, tc.v4)
		p.run(t)
		if p.d.size != tc.mtu || p.d.lost > 2 {
			t.Errorf("v4 %v, path %d: size %d with %d sizes given up, want %d with at most 2 (probes %v)", tc.v4, tc.mtu, p.d.size, p.d.lost, tc.mtu, p.sizes)
		}
	}
}
