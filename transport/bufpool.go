package transport

import (
	"math/bits"
	"sync"
)

// Per-connection buffers (the send and receive rings' bytes, the scoreboard's
// segments) are recycled across connections through process-wide pools, one
// per power-of-two size: a simulation of many short transfers (ON/OFF flows,
// a new connection per ON period) otherwise allocates and clears several KiB
// per connection and leaves them to the garbage collector. A connection takes
// a buffer when it first needs one, grows it by doubling (returning the
// smaller one) and returns it once it is empty after the connection finished
// (Conn.releaseBuffers). The pools are sync.Pools, so what is pooled is given
// back to the collector when unused for two collections, and endpoints in
// different goroutines share them safely.
//
// A recycled buffer holds stale bytes of an earlier connection; nothing reads
// a ring's byte or a scoreboard's segment before writing it, so results do
// not depend on what the pool returns (a transfer's event trace is the same
// with fresh buffers and with pooled garbage: TestBufPoolDeterministic).

// Size classes: rings from minRing bytes, scoreboards from minSegs segments,
// each class twice the previous; larger buffers are not pooled.
const (
	minRing     = 4096
	minSegs     = 64
	poolClasses = 11 // up to 4 MiB rings, 65,536-segment scoreboards
)

// recycleBuffers turns the pools on; BenchmarkConnChurn turns it off to
// measure against fresh buffers in the same run.
var recycleBuffers = true

// bufPool is one pool per size class of buffers of T, min<<class long.
type bufPool[T any] struct {
	min   int
	class [poolClasses]sync.Pool // of *[]T
}

var (
	rings   = bufPool[byte]{min: minRing}    // send and receive rings
	segBufs = bufPool[Segment]{min: minSegs} // scoreboards
)

// poolClass returns the class of a buffer of n units, n = min<<class, or -1
// if n is not a pooled size.
func poolClass(n, min int) int {
	if n < min || n%min != 0 || bits.OnesCount(uint(n/min)) != 1 {
		return -1
	}
	if c := bits.Len(uint(n/min)) - 1; c < poolClasses {
		return c
	}
	return -1
}

// get returns a buffer of n units (a power-of-two multiple of min) with
// unspecified contents.
func (p *bufPool[T]) get(n int) []T {
	if c := poolClass(n, p.min); c >= 0 && recycleBuffers {
		if v, ok := p.class[c].Get().(*[]T); ok {
			return *v
		}
	}
	return make([]T, n)
}

// put recycles b, which its owner no longer uses.
func (p *bufPool[T]) put(b []T) {
	if c := poolClass(len(b), p.min); c >= 0 && recycleBuffers {
		p.class[c].Put(&b)
	}
}
