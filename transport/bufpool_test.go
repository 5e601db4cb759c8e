package transport

import (
	"testing"
)

// drainPools empties the buffer pools (what a sync.Pool still holds).
func drainPools() {
	for c := range poolClasses {
		for rings.class[c].Get() != nil {
		}
		for segBufs.class[c].Get() != nil {
		}
	}
}

// poisonPools fills the pools with buffers of garbage: bytes 0xA5 and
// segments with every field set, as an earlier connection might leave them.
func poisonPools() {
	for c := range 6 {
		for range 4 {
			b := make([]byte, minRing<<c)
			for i := range b {
				b[i] = 0xA5
			}
			rings.put(b)
			s := make([]Segment, minSegs<<c)
			for i := range s {
				s[i] = Segment{Off: 1 << 40, Len: 999, Fin: true, SentAt: 12345, TS: 7, Retrans: 3, Sacked: true, Lost: true, SendSeq: 1 << 30}
			}
			segBufs.put(s)
		}
	}
}

// TestBufPoolDeterministic: connections whose scoreboard and rings come
// from pools full of an earlier connection's garbage behave exactly as with
// fresh buffers (same event trace, every byte delivered), and a finished
// connection gives its empty buffers back.
func TestBufPoolDeterministic(t *testing.T) {
	for _, rec := range []string{"newreno", "rack"} {
		t.Run(rec, func(t *testing.T) {
			drainPools()
			h1, cli, srv := runImpaired(t, 7, 0.05, 512<<10, rec)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if got := [3]bool{cli.sb.segs == nil, srv.rbuf.b == nil, cli.rbuf.b == nil}; got != [3]bool{true, true, true} {
				t.Errorf("finished conns: client scoreboard, server and client receive rings released %v, want all true", got)
			}
			poisonPools()
			h2, cli, srv := runImpaired(t, 7, 0.05, 512<<10, rec)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if h1.traceHash() != h2.traceHash() {
				t.Errorf("fresh and recycled buffers: traces differ")
			}
		})
	}
}

// TestPoolClass: only power-of-two multiples of the smallest size within
// the classes are pooled.
func TestPoolClass(t *testing.T) {
	for _, tc := range []struct{ n, min, want int }{
		{4096, minRing, 0}, {8192, minRing, 1}, {4096 << 10, minRing, 10}, {4096 << 11, minRing, -1},
		{2048, minRing, -1}, {12288, minRing, -1}, {0, minRing, -1}, {64, minSegs, 0}, {96, minSegs, -1},
	} {
		if got := poolClass(tc.n, tc.min); got != tc.want {
			t.Errorf("poolClass(%d, %d) = %d, want %d", tc.n, tc.min, got, tc.want)
		}
	}
}
