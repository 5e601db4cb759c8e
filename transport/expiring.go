package transport

import "cclab/clock"

// expiring is a table of entries by 64-bit ID that expire (the endpoint's
// tombstones of removed connections). Entries are queued in the order they
// are put, so that dropping the expired ones (sweep) costs time in
// proportion to them and not to the table: an endpoint that opens and
// closes many connections would otherwise walk every tombstone at each
// sweep. An expired entry is never returned (get checks its time), so when
// sweep drops it does not change what the table answers.
//
// A small table is only the queue, searched from its newest entry: most
// endpoints hold a few tombstones (a simulated host's flow leaves one per
// transfer for IdleTimeout), and a map per endpoint cost an allocation and
// its growth for each. From expiringSmall entries on, a map indexes them
// (a server with many connections, or one sent garbage CIDs, looks them up
// in constant time).
type expiring[V any] struct {
	q fifo[expiringEntry[V]] // pending, in the order of put
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
		q := t.q.items()
		for i := len(q) - 1; i >= 0; i-- { // newest first: a put again wins
			if e := &q[i]; e.id == id {
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
	t.q.push(e)
	switch {
	case t.m != nil:
		t.m[id] = e
	case t.q.len() > expiringSmall:
		t.m = make(map[uint64]expiringEntry[V], 2*expiringSmall)
		for _, e := range t.q.items() { // in order: a put again overwrites
			t.m[e.id] = e
		}
	}
}

// len returns the number of entries pending (expired ones not yet swept
// included; an entry put twice counts twice until its first expiry is
// swept).
func (t *expiring[V]) len() int { return t.q.len() }

// sweep drops the entries expired at now, in the order they were put: it
// stops at the first queued entry still alive (one that lives longer than
// those put after it delays their removal, not their expiry).
func (t *expiring[V]) sweep(now clock.Time) {
	for r := t.q.front(); r != nil && !now.Before(r.exp); r = t.q.front() {
		if t.m != nil {
			if e, ok := t.m[r.id]; ok && !now.Before(e.exp) { // not put again with a later expiry
				delete(t.m, r.id)
			}
		}
		t.q.pop()
	}
}
