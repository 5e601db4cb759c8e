package event

import (
	"reflect"
	"testing"
	"time"

	"cclab/clock"
)

// TestHasherCoversEveryField: changing any one field of an event changes
// the hash, the same events in the same order give the same hash, and
// hashing does not allocate.
func TestHasherCoversEveryField(t *testing.T) {
	base := Event{Time: clock.Start.Add(time.Second), Kind: Enqueue, Flow: 7, Link: 2, Seq: 9, Bytes: 1228, Reason: 1,
		Cwnd: 10, Ssthresh: 11, InFlight: 12, SRTT: 13, RTT: 14, MinRTT: 15, QueueLen: 16, QueueBytes: 17, Sojourn: 18}
	sum := func(es ...Event) uint64 {
		var h Hasher
		for _, e := range es {
			h.Record(&e)
		}
		s, n := h.Sum()
		if n != uint64(len(es)) {
			t.Fatalf("Sum counted %d events, want %d", n, len(es))
		}
		return s
	}
	ref := sum(base)
	if sum(base) != ref {
		t.Fatalf("the same event hashed twice differently")
	}
	v := reflect.ValueOf(&base).Elem()
	for i := 0; i < v.NumField(); i++ {
		e := base
		f := reflect.ValueOf(&e).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint8, reflect.Uint64:
			f.SetUint(f.Uint() + 1)
		default:
			t.Fatalf("field %s of kind %v: extend the test", v.Type().Field(i).Name, f.Kind())
		}
		if sum(e) == ref {
			t.Errorf("changing %s does not change the hash", v.Type().Field(i).Name)
		}
	}
	if sum(base, Event{}) == sum(Event{}, base) {
		t.Errorf("the hash does not depend on the order of events")
	}
	var h Hasher
	if a := testing.AllocsPerRun(100, func() { h.Record(&base) }); a != 0 {
		t.Errorf("Record allocates %v times, want 0", a)
	}
}
