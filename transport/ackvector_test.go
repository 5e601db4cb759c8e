package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// expand decodes vec into a map seq -> state.
func expand(t testing.TB, ackNo uint64, vec []byte) (map[uint64]AckState, bool) {
	t.Helper()
	m := map[uint64]AckState{}
	ok := DecodeAckVector(ackNo, vec, func(r AckRun) {
		for i := uint64(0); i < r.Len; i++ {
			m[r.Top-i] = r.State
		}
	})
	return m, ok
}

func TestDecodeAckVector(t *testing.T) {
	R, E, N := byte(AckReceived)<<6, byte(AckReceivedECN)<<6, byte(AckNotReceived)<<6
	for _, tc := range []struct {
		name  string
		ackNo uint64
		vec   []byte
		ok    bool
		want  map[uint64]AckState // nil: only ok is checked
	}{
		{"one packet", 5, []byte{R}, true, map[uint64]AckState{5: AckReceived}},
		// RFC 4340 §11.4 example style: ackNo received, two lost, three received.
		{"runs", 10, []byte{R, N | 1, E | 2}, true, map[uint64]AckState{
			10: AckReceived, 9: AckNotReceived, 8: AckNotReceived, 7: AckReceivedECN, 6: AckReceivedECN, 5: AckReceivedECN}},
		{"max run 64", 100, []byte{R | 63}, true, nil},
		{"run reaches seq 0 exactly", 63, []byte{R | 63}, true, nil},
		{"run below seq 0", 62, []byte{R | 63}, false, nil},
		{"byte after seq 0", 0, []byte{R, R}, false, nil},
		{"reserved state", 10, []byte{2 << 6}, false, nil},
		{"empty", 10, nil, true, map[uint64]AckState{}},
		{"ackNo 0", 0, []byte{E}, true, map[uint64]AckState{0: AckReceivedECN}},
		{"too long", 1 << 40, bytes.Repeat([]byte{R}, MaxAckVector+1), false, nil},
		{"max length", 1 << 40, bytes.Repeat([]byte{R | 63}, MaxAckVector), true, nil},
	} {
		got, ok := expand(t, tc.ackNo, tc.vec)
		if ok != tc.ok {
			t.Errorf("%s: ok got %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if tc.want != nil && fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: states got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAckVectorRoundTrip: random arrival patterns (losses, reordering, CE,
// duplicates) encode to a vector that decodes to exactly the receiver's
// per-packet truth, with maximal runs (no two adjacent bytes mergeable).
func TestAckVectorRoundTrip(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		var v ackVecRecv
		truth := map[uint64]AckState{}
		start := rng.Uint64N(1 << 20)
		n := 1 + rng.IntN(600)
		lossP := rng.Float64() * 0.5
		for i := 0; i < n; i++ {
			seq := start + uint64(i)
			if rng.Float64() < lossP {
				continue
			}
			if rng.IntN(10) == 0 && i > 3 { // late arrival of an earlier loss
				old := seq - uint64(1+rng.IntN(3))
				if _, seen := truth[old]; !seen {
					ce := rng.IntN(4) == 0
					v.received(old, ce)
					truth[old] = stateOf(ce)
				}
			}
			ce := rng.IntN(8) == 0
			if !v.received(seq, ce) {
				t.Fatalf("seed %d: new packet %d refused", seed, seq)
			}
			truth[seq] = stateOf(ce)
			if rng.IntN(20) == 0 && v.received(seq, false) {
				t.Errorf("seed %d: duplicate %d accepted", seed, seq)
			}
		}
		if !v.any {
			continue
		}
		buf := make([]byte, MaxAckVector)
		k, low := v.encode(buf)
		if low != v.lo {
			t.Errorf("seed %d: low got %v, want %v (vector not cut short)", seed, low, v.lo)
		}
		got, ok := expand(t, v.hi, buf[:k])
		if !ok {
			t.Fatalf("seed %d: own vector rejected", seed)
		}
		for s := v.lo; s <= v.hi; s++ {
			want, seen := truth[s]
			if !seen {
				want = AckNotReceived
			}
			if got[s] != want {
				t.Errorf("seed %d: seq %d got %v, want %v", seed, s, got[s], want)
			}
		}
		if uint64(len(got)) != v.hi-v.lo+1 {
			t.Errorf("seed %d: covered %d packets, want %d", seed, len(got), v.hi-v.lo+1)
		}
		for i := 1; i < k; i++ {
			if buf[i]>>6 == buf[i-1]>>6 && buf[i-1]&ackRunMax != ackRunMax {
				t.Errorf("seed %d: bytes %d,%d could be one run (%#x %#x)", seed, i-1, i, buf[i-1], buf[i])
			}
		}
	}
}

func stateOf(ce bool) AckState {
	if ce {
		return AckReceivedECN
	}
	return AckReceived
}

func TestAckVectorRunBoundaries(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 127, 128, 129, 1000} {
		var v ackVecRecv
		for i := 0; i < n; i++ {
			v.received(uint64(1000+i), false)
		}
		buf := make([]byte, 64)
		k, _ := v.encode(buf)
		if want := (n + 63) / 64; k != want {
			t.Errorf("%d received in a row: %d bytes, want %d", n, k, want)
		}
		if buf[k-1]&ackRunMax != byte((n-1)%64) {
			t.Errorf("%d in a row: last run length got %d, want %d", n, buf[k-1]&ackRunMax, (n-1)%64)
		}
	}
}

func TestAckVectorCutShort(t *testing.T) {
	var v ackVecRecv
	for i := uint64(0); i < 100; i += 2 { // alternate received / not received: one byte per packet
		v.received(i, false)
	}
	buf := make([]byte, 10)
	k, low := v.encode(buf)
	if k != 10 || low != 98-9 {
		t.Errorf("cut short: got %d bytes, low %d; want 10, 89", k, low)
	}
	// Acknowledging a cut-short vector must not trim (the peer never saw
	// the state below low).
	v.sent(7, v.hi, low)
	v.ackAcked(7)
	if v.lo != 0 {
		t.Errorf("after ack of a cut-short ack: lo got %d, want 0", v.lo)
	}
}

func TestAckVectorTrimOnAckAck(t *testing.T) {
	var v ackVecRecv
	buf := make([]byte, MaxAckVector)
	for i := uint64(10); i < 30; i++ {
		v.received(i, false)
	}
	k, low := v.encode(buf)
	_ = k
	v.sent(1, v.hi, low) // our ack packet 1 covered 10..29
	for i := uint64(30); i < 40; i++ {
		v.received(i, i == 35)
	}
	v.ackAcked(2) // never sent: nothing happens
	if v.lo != 10 {
		t.Fatalf("ack of an unknown ack: lo got %d, want 10", v.lo)
	}
	v.ackAcked(1)
	if v.lo != 30 || v.span() != 10 {
		t.Errorf("after ack of ack 1: lo %d span %d, want 30 10 (RFC 4340 §11.4.2)", v.lo, v.span())
	}
	v.ackAcked(1) // a duplicate changes nothing
	if v.lo != 30 {
		t.Errorf("duplicate ack of ack: lo got %d, want 30", v.lo)
	}
	k, low = v.encode(buf)
	got, _ := expand(t, v.hi, buf[:k])
	if low != 30 || len(got) != 10 || got[35] != AckReceivedECN {
		t.Errorf("vector after trim: low %d, %d packets, seq35 %v; want 30, 10, ECN", low, len(got), got[35])
	}
	// A packet below the trimmed span is counted, not reported.
	if v.received(12, false) || v.late != 1 {
		t.Errorf("late packet: accepted or not counted (late=%d)", v.late)
	}
	// Trimming everything keeps the Acknowledgement Number.
	v.sent(2, v.hi, 30)
	v.ackAcked(2)
	if v.lo != v.hi || v.span() != 1 {
		t.Errorf("after full trim: lo %d hi %d, want lo == hi", v.lo, v.hi)
	}
}

func TestAckVectorSpanBounded(t *testing.T) {
	var v ackVecRecv
	for i := uint64(0); i <= 20; i++ {
		v.received(i, false)
	}
	v.received(maxAckSpan+10, false)
	if v.span() != maxAckSpan || v.forgot != 11 {
		t.Errorf("span %d forgot %d, want %d 11", v.span(), v.forgot, maxAckSpan)
	}
	v.received(10*maxAckSpan, false) // a jump beyond the span forgets everything
	if v.span() != 1 {
		t.Errorf("after a far jump: span %d, want 1", v.span())
	}
}

// ackVectorSeeds returns (ackNo, vector) fuzz seeds.
func ackVectorSeeds() [][]byte {
	R, E, N := byte(AckReceived)<<6, byte(AckReceivedECN)<<6, byte(AckNotReceived)<<6
	mk := func(ackNo uint64, vec ...byte) []byte {
		b := make([]byte, 8, 8+len(vec))
		for i := 0; i < 8; i++ {
			b[i] = byte(ackNo >> (56 - 8*i))
		}
		return append(b, vec...)
	}
	return [][]byte{
		mk(10, R, N|1, E|2),
		mk(63, R|63),
		mk(62, R|63),
		mk(0, R, R),
		mk(1<<40, R|63, N|63, E|63, 2<<6),
		mk(5),
	}
}

// FuzzAckVector: decoding never panics; what decodes re-encodes (through a
// receiver fed the decoded state) to a vector describing the same states.
func FuzzAckVector(f *testing.F) {
	for _, s := range ackVectorSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 8 {
			return
		}
		var ackNo uint64
		for i := 0; i < 8; i++ {
			ackNo = ackNo<<8 | uint64(b[i])
		}
		vec := b[8:]
		got, ok := expand(t, ackNo, vec)
		if !ok || len(vec) == 0 {
			return
		}
		// Rebuild: feed the received packets to a receiver spanning the
		// same range, re-encode, and compare.
		low := ackNo
		for s := range got {
			low = min(low, s)
		}
		if ackNo-low > 1<<14 {
			return
		}
		var v ackVecRecv
		v.received(low, got[low] == AckReceivedECN)
		for s := low + 1; s <= ackNo; s++ {
			if st := got[s]; st != AckNotReceived {
				v.received(s, st == AckReceivedECN)
			}
		}
		if got[low] == AckNotReceived {
			v.st[low&uint64(len(v.st)-1)] = AckNotReceived
		}
		buf := make([]byte, MaxAckVector*2)
		k, _ := v.encode(buf)
		again, ok := expand(t, ackNo, buf[:k])
		if !ok {
			t.Fatalf("re-encoded vector rejected")
		}
		if got[ackNo] == AckNotReceived {
			return // a vector whose head is "not received" is never produced by a receiver
		}
		for s, st := range got {
			if again[s] != st {
				t.Fatalf("seq %d: re-encoded %v, decoded %v", s, again[s], st)
			}
		}
		if k > len(vec) {
			t.Fatalf("re-encoding longer (%d bytes) than the input (%d): runs not maximal", k, len(vec))
		}
	})
}

// TestWriteAckVectorSeeds regenerates the FuzzAckVector and
// FuzzDecodeDgram seed files when CCLAB_WRITE_SEEDS=1.
func TestWriteAckVectorSeeds(t *testing.T) {
	if os.Getenv("CCLAB_WRITE_SEEDS") != "1" {
		t.Skip("set CCLAB_WRITE_SEEDS=1 to rewrite the seed corpus")
	}
	for name, seeds := range map[string][][]byte{"FuzzAckVector": ackVectorSeeds(), "FuzzDecodeDgram": dgramSeeds()} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, b := range seeds {
			data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%d", i)), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
