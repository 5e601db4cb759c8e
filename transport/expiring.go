package transport

import "cclab/clock"

// expiring is a table of entries by 64-bit ID that expire (the endpoint's
// tombstones of removed connections). Entries are kept in a binary min-heap
// by expiry, so that dropping the expired ones (sweep) costs time in
// proportion to them (times the heap's depth) and not to the table: an
// endpoint that opens and closes many connections would otherwise walk
// every tombstone at each sweep. Each entry is dropped at the first sweep
// after its own expiry, whatever the others' (connections' IdleTimeouts
// differ: in put order, one long-lived entry would hold back all those put
// after it). An expired entry is never returned (get checks its time), so
// when sweep drops it does not change what the table answers.
//
// A small table is only the heap, searched whole: most endpoints hold a few
// tombstones (a simulated host's flow leaves one per transfer for
// IdleTimeout), and a map per endpoint cost an allocation and its growth
// for each. From expiringSmall entries on, a map indexes them (a server with
// many connections, or one sent garbage CIDs, looks them up in constant
// time). The heap's slice is reused: it grows to the most entries pending at
// once and no further.
type expiring[V any] struct {
	h []expiringEntry[V] // pending, a min-heap by exp; without m, one entry per ID
	m map[uint64]expiringEntry[V]
}

// expiringSmall is how many pending entries a table searches without a map.
const expiringSmall = 16

type expiringEntry[V any] struct {
	id  uint64
	exp clock.Time // the entry is gone from exp on
	v   V
}

// get returns the entry for id if it has not expired at now.
func (t *expiring[V]) get(id uint64, now clock.Time) (V, bool) {
	if t.m != nil {
		if e, ok := t.m[id]; ok && now.Before(e.exp) {
			return e.v, true
		}
	} else {
		for i := range t.h {
			if e := &t.h[i]; e.id == id {
				if now.Before(e.exp) {
					return e.v, true
				}
				break
			}
		}
	}
	var zero V
	return zero, false
}

// put sets the entry for id until exp (replacing an earlier one).
func (t *expiring[V]) put(id uint64, v V, exp clock.Time) {
	e := expiringEntry[V]{id, exp, v}
	if t.m == nil {
		for i := range t.h {
			if t.h[i].id == id { // put again: replace it where it is
				t.h[i] = e
				t.up(i)
				t.down(i)
				return
			}
		}
	}
	if t.h == nil {
		// The small table's whole heap at once: a host's flow of
		// back-to-back transfers keeps one tombstone per transfer of the
		// last IdleTimeout (up to a dozen in the scale benchmark), which
		// append's growth from one entry reached in five allocations
		// (four copies and their garbage).
		t.h = make([]expiringEntry[V], 0, expiringSmall)
	}
	t.h = append(t.h, e)
	t.up(len(t.h) - 1)
	switch {
	case t.m != nil:
		t.m[id] = e // the heap may hold an earlier entry of id too: sweep checks the map's
	case len(t.h) > expiringSmall:
		t.m = make(map[uint64]expiringEntry[V], 2*expiringSmall)
		for _, e := range t.h { // one entry per ID so far
			t.m[e.id] = e
		}
	}
}

// len returns the number of entries pending (expired ones not yet swept
// included; with the map, an entry put twice counts twice until its first
// expiry is swept).
func (t *expiring[V]) len() int { return len(t.h) }

// sweep drops every entry expired at now.
func (t *expiring[V]) sweep(now clock.Time) {
	for len(t.h) > 0 && !now.Before(t.h[0].exp) {
		r := t.h[0]
		if t.m != nil {
			if e, ok := t.m[r.id]; ok && !now.Before(e.exp) { // not put again with a later expiry
				delete(t.m, r.id)
			}
		}
		n := len(t.h) - 1
		t.h[0] = t.h[n]
		t.h[n] = expiringEntry[V]{} // drop what V refers to
		t.h = t.h[:n]
		t.down(0)
	}
}

// up moves entry i towards the root while it expires before its parent.
func (t *expiring[V]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.h[i].exp.Before(t.h[p].exp) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

// down moves entry i towards the leaves while a child expires before it.
func (t *expiring[V]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(t.h) {
			return
		}
		m := l
		if r := l + 1; r < len(t.h) && t.h[r].exp.Before(t.h[l].exp) {
			m = r
		}
		if !t.h[m].exp.Before(t.h[i].exp) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}
