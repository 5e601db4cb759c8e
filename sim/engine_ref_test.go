package sim

import "cclab/clock"

// refQueue is the engine's former event queue (a 4-ary heap of 40-byte
// entries holding the handler), kept as the reference the engine's order is
// checked against (TestEngineMatchesReference) and as the side-by-side
// baseline of BenchmarkEngine.
type refQueue struct {
	now  clock.Time
	seq  uint64
	heap []refEntry
}

type refEntry struct {
	at  clock.Time
	seq uint64
	h   Handler
	arg uint64
}

func (a *refEntry) less(b *refEntry) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *refQueue) Now() clock.Time { return q.now }

func (q *refQueue) Schedule(at clock.Time, h Handler, arg uint64) {
	if at < q.now {
		at = q.now
	}
	q.seq++
	q.heap = append(q.heap, refEntry{at: at, seq: q.seq, h: h, arg: arg})
	h2 := q.heap
	i := len(h2) - 1
	x := h2[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h2[p]) {
			break
		}
		h2[i] = h2[p]
		i = p
	}
	h2[i] = x
}

func (q *refQueue) Step() bool {
	if len(q.heap) == 0 {
		return false
	}
	ev := q.heap[0]
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap[last] = refEntry{}
	q.heap = q.heap[:last]
	if last > 0 {
		h := q.heap
		n := len(h)
		i := 0
		x := h[0]
		for {
			c := 4*i + 1
			if c >= n {
				break
			}
			best := c
			for j := c + 1; j < min(c+4, n); j++ {
				if h[j].less(&h[best]) {
					best = j
				}
			}
			if !h[best].less(&x) {
				break
			}
			h[i] = h[best]
			i = best
		}
		h[i] = x
	}
	q.now = ev.at
	ev.h.Fire(ev.at, ev.arg)
	return true
}

// refTimer is the engine's former Timer (a generation counter tells its
// live event from stale ones), on refQueue: the reference of
// TestTimerMatchesReference.
type refTimer struct {
	q       *refQueue
	h       Handler
	arg     uint64
	gen     uint64
	pending clock.Time
	want    clock.Time
}

func (t *refTimer) Set(at clock.Time) {
	t.want = at
	if at == clock.Never {
		return
	}
	if at < t.q.now {
		at = t.q.now
		t.want = at
	}
	if t.pending != clock.Never && t.pending <= at {
		return
	}
	t.gen++
	t.pending = at
	t.q.Schedule(at, t, t.gen)
}

func (t *refTimer) Fire(now clock.Time, gen uint64) {
	if gen != t.gen {
		return
	}
	t.pending = clock.Never
	switch {
	case t.want == clock.Never:
		return
	case t.want > now:
		t.gen++
		t.pending = t.want
		t.q.Schedule(t.want, t, t.gen)
		return
	}
	t.want = clock.Never
	t.h.Fire(now, t.arg)
}
