package relay

import (
	"sync/atomic"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/link"
	"cclab/qdisc"
)

// TestSinkMatchesHopStats checks that Config.Sink sees every link event of
// every hop, under the configured link indices and the clients' flow keys,
// never two calls at once, each hop's queue events in time order, and that
// the events add up to the hops' own counters.
func TestSinkMatchesHopStats(t *testing.T) {
	// A 50-datagram burst into a 250 kbit/s hop with a 10-packet DropTail
	// queue (as in TestDropTailBurstDropsExactly: 11 pass, 39 drop), then an
	// unshaped second hop.
	const burst, size, limit = 50, 1000, 10
	links := [2][]int32{{7, 9}}
	var (
		events  []event.Event
		inside  atomic.Bool
		overlap atomic.Int64
	)
	// No lock of its own: the relay must serialize the calls (the race
	// detector and the overlap count check that it does).
	sink := event.Func(func(e *event.Event) {
		if inside.Swap(true) {
			overlap.Add(1)
		}
		events = append(events, *e)
		inside.Store(false)
	})
	tn := memNet()
	dst := newSink(t, tn, false)
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), Sink: sink, Links: links,
		Hops: [2][]link.Config{{mkHop(t, "rate=250kbit,queue=droptail:10p"), {}}}})
	c := dial(t, tn, r.Addr())
	if n, err := c.WriteBatch(datagrams(0, burst, size, ecn.NotECT)); err != nil || n != burst {
		t.Fatalf("WriteBatch: %d, %v", n, err)
	}
	// The datagrams that pass leave the second hop when the relay writes
	// them, so once the sink holds them every event has been recorded.
	if got := dst.waitFor(limit+1, 5*time.Second); len(got) != limit+1 {
		t.Fatalf("received %d datagrams, want %d", len(got), limit+1)
	}
	end := r.Now()
	stats := r.HopStats(Fwd)
	r.Close()

	if n := overlap.Load(); n != 0 {
		t.Errorf("overlapping Sink calls got %d, want 0", n)
	}
	flow := r.FlowKey(c.LocalAddr(), Fwd)
	type tally struct {
		enq, drops, deq, deps, depBytes int64
		last                            clock.Time
	}
	got := map[int32]*tally{}
	for _, e := range events {
		tl := got[e.Link]
		if tl == nil {
			tl = &tally{}
			got[e.Link] = tl
		}
		if e.Flow != flow {
			t.Errorf("%v event on link %d: flow %x, want the client's key %x", e.Kind, e.Link, e.Flow, flow)
		}
		if e.Time > end {
			t.Errorf("%v event at %v, after the relay's clock read %v", e.Kind, e.Time, end)
		}
		switch e.Kind {
		case event.Enqueue:
			tl.enq++
		case event.Drop:
			tl.drops++
		case event.Dequeue:
			tl.deq++
		case event.Departure:
			tl.deps++
			tl.depBytes += int64(e.Bytes)
			continue // departures are stamped at the far end, later than queue events
		}
		if e.Time < tl.last {
			t.Errorf("link %d: %v event at %v before the previous queue event at %v", e.Link, e.Kind, e.Time, tl.last)
		}
		tl.last = e.Time
	}
	if len(got) != len(links[Fwd]) {
		t.Errorf("events on %d links, want %d (the forward hops %v)", len(got), len(links[Fwd]), links[Fwd])
	}
	for i, idx := range links[Fwd] {
		tl, st := got[idx], stats[i]
		if tl == nil {
			t.Errorf("hop %d: no events under link index %d", i, idx)
			continue
		}
		checks := []struct {
			name      string
			got, want int64
		}{
			{"enqueues", tl.enq, st.Enqueued},
			{"drops", tl.drops, st.TotalDrops()},
			{"dequeues", tl.deq, st.Dequeues},
			{"departures", tl.deps, st.Departures},
			{"departure bytes", tl.depBytes, st.DepartureBytes},
		}
		for _, ck := range checks {
			if ck.got != ck.want {
				t.Errorf("hop %d (link %d): %s from events got %d, want the hop's counter %d", i, idx, ck.name, ck.got, ck.want)
			}
		}
	}
	if st := stats[0]; st.Drops[qdisc.DropOverflow] != burst-limit-1 {
		t.Errorf("first hop overflow drops got %d, want %d", st.Drops[qdisc.DropOverflow], burst-limit-1)
	}
}
