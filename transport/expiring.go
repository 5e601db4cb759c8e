package transport

import "cclab/clock"

// expiring is a table of entries by 64-bit ID that expire (the endpoint's
// tombstones of removed connections). Entries are queued in the order they
// are put as well, so that dropping the expired ones (sweep) costs time in
// proportion to them and not to the table: an endpoint that opens and
// closes many connections would otherwise walk every tombstone at each
// sweep. An expired entry is never returned (get checks its time), so when
// sweep drops it does not change what the table answers.
type expiring[V any] struct {
	m    map[uint64]expiringEntry[V]
	q    []expiryRec // in the order of put
	head int         // q[head:] are pending
}

type expiringEntry[V any] struct {
	v   V
	exp clock.Time // the entry is gone from exp on
}

// expiryRec is one queued put: the ID and the expiry it set.
type expiryRec struct {
	id  uint64
	exp clock.Time
}

// get returns the entry for id if it has not expired at now.
func (t *expiring[V]) get(id uint64, now clock.Time) (V, bool) {
	if e, ok := t.m[id]; ok && now.Before(e.exp) {
		return e.v, true
	}
	var zero V
	return zero, false
}

// put sets the entry for id until exp (replacing an earlier one).
func (t *expiring[V]) put(id uint64, v V, exp clock.Time) {
	if t.m == nil {
		t.m = map[uint64]expiringEntry[V]{}
	}
	t.m[id] = expiringEntry[V]{v, exp}
	t.q = append(t.q, expiryRec{id, exp})
}

// len returns the number of entries held (expired ones not yet swept
// included).
func (t *expiring[V]) len() int { return len(t.m) }

// sweep drops the entries expired at now, in the order they were put: it
// stops at the first queued entry still alive (one that lives longer than
// those put after it delays their removal, not their expiry).
func (t *expiring[V]) sweep(now clock.Time) {
	for t.head < len(t.q) && !now.Before(t.q[t.head].exp) {
		r := t.q[t.head]
		t.head++
		if e, ok := t.m[r.id]; ok && !now.Before(e.exp) { // not put again with a later expiry
			delete(t.m, r.id)
		}
	}
	switch {
	case t.head == len(t.q):
		t.q, t.head = t.q[:0], 0
	case t.head >= 64 && t.head*2 >= len(t.q):
		n := copy(t.q, t.q[t.head:])
		t.q, t.head = t.q[:n], 0
	}
}
