package transport

// Ack Vectors (RFC 4340 §11.4): the run-length encoded receive state a
// datagram-mode receiver reports. Each byte is a 2-bit state and a 6-bit run
// length; the first byte describes the Acknowledgement Number and the
// run-length packets below it, the next byte the packets below those, and so
// on, in descending sequence order.

// AckState is the state of one packet in an Ack Vector (RFC 4340 §11.4).
type AckState uint8

// Ack Vector states (RFC 4340 §11.4, Table 6).
const (
	AckReceived    AckState = 0 // received
	AckReceivedECN AckState = 1 // received ECN marked (CE)
	ackReserved    AckState = 2 // reserved: a vector with it is malformed
	AckNotReceived AckState = 3 // not yet received
)

const (
	// ackRunMax is the largest run length in one Ack Vector byte: 6 bits,
	// so one byte covers 1..64 packets (RFC 4340 §11.4).
	ackRunMax = 63
	// MaxAckVector is the longest Ack Vector one packet carries, bytes. RFC
	// 4340 §11.4 limits one option to 253 bytes but allows several options;
	// we carry one length-prefixed vector of up to 1024 bytes (up to 65536
	// packets of state).
	MaxAckVector = 1024
	// maxAckSpan bounds the receive state a receiver keeps, packets: state
	// older than this is forgotten (counted) even if the peer never
	// acknowledges our acknowledgements.
	maxAckSpan = 1 << 15
)

// AckRun is one decoded Ack Vector byte: Len packets in State, the highest
// being Top (sequence numbers Top-Len+1 .. Top).
type AckRun struct {
	State AckState
	Top   uint64 // highest sequence number of the run
	Len   uint64 // packets in the run, 1..64
}

// DecodeAckVector parses vec, the Ack Vector of an acknowledgement whose
// Acknowledgement Number is ackNo, calling f for each run in descending
// order. It returns false (and stops) if the vector is malformed: a
// reserved state, or runs reaching below sequence number 0. It never
// allocates.
func DecodeAckVector(ackNo uint64, vec []byte, f func(AckRun)) bool {
	if len(vec) > MaxAckVector {
		return false
	}
	next := ackNo // highest sequence number not yet described
	exhausted := false
	for _, b := range vec {
		st := AckState(b >> 6)
		n := uint64(b&ackRunMax) + 1
		if st == ackReserved || exhausted || n > next+1 {
			return false
		}
		if f != nil {
			f(AckRun{State: st, Top: next, Len: n})
		}
		if n == next+1 {
			exhausted = true // reached sequence number 0
		} else {
			next -= n
		}
	}
	return true
}

// ackVecRecv is a receiver's Ack Vector state: one state per packet from lo
// (the oldest not yet trimmed) to hi (the Acknowledgement Number, the
// highest received), in a ring.
type ackVecRecv struct {
	st      []AckState // ring, power-of-two length; index seq & (len-1)
	lo, hi  uint64     // tracked span [lo, hi]; empty when !any
	any     bool       // a packet has been received
	forgot  uint64     // packets whose state was dropped because the span exceeded maxAckSpan
	late    uint64     // packets arriving below lo (already trimmed): not reported
	records [ackRecords]ackRecord
}

// ackRecords is how many sent acknowledgements a receiver remembers for
// acknowledgement-of-acknowledgement trimming (RFC 4340 §11.4.2).
const ackRecords = 64

// ackRecord remembers what one sent acknowledgement covered.
type ackRecord struct {
	seq   uint64 // our packet's sequence number
	ackNo uint64 // its Acknowledgement Number
	low   uint64 // the lowest sequence number its vector described
	valid bool
}

// received records the arrival of packet seq with ECN mark ce. It returns
// false for a duplicate or a packet below the trimmed span.
func (v *ackVecRecv) received(seq uint64, ce bool) bool {
	state := AckReceived
	if ce {
		state = AckReceivedECN
	}
	if v.st == nil {
		v.st = make([]AckState, 256)
	}
	if !v.any {
		v.any = true
		v.lo, v.hi = seq, seq
		v.st[seq&uint64(len(v.st)-1)] = state
		return true
	}
	if seq < v.lo {
		v.late++
		return false
	}
	if seq <= v.hi {
		i := seq & uint64(len(v.st)-1)
		if v.st[i] != AckNotReceived {
			return false
		}
		v.st[i] = state
		return true
	}
	// Extend the span to seq, marking the gap not received.
	if seq-v.lo+1 > maxAckSpan {
		nlo := seq - maxAckSpan + 1
		if nlo > v.hi {
			v.forgot += v.hi - v.lo + 1
			v.lo, v.hi = seq, seq
			v.st[seq&uint64(len(v.st)-1)] = state
			return true
		}
		v.forgot += nlo - v.lo
		v.lo = nlo
	}
	for seq-v.lo+1 > uint64(len(v.st)) {
		v.grow()
	}
	m := uint64(len(v.st) - 1)
	for s := v.hi + 1; s < seq; s++ {
		v.st[s&m] = AckNotReceived
	}
	v.st[seq&m] = state
	v.hi = seq
	return true
}

// grow doubles the ring, keeping [lo, hi].
func (v *ackVecRecv) grow() {
	n := make([]AckState, 2*len(v.st))
	om, nm := uint64(len(v.st)-1), uint64(len(n)-1)
	for s := v.lo; s <= v.hi; s++ {
		n[s&nm] = v.st[s&om]
	}
	v.st = n
}

// encode writes the Ack Vector for [lo, hi] into b (at most len(b) bytes,
// newest first: a vector cut short describes the most recent packets) and
// returns its length and the lowest sequence number described.
func (v *ackVecRecv) encode(b []byte) (n int, low uint64) {
	if !v.any || len(b) == 0 {
		return 0, v.hi + 1
	}
	m := uint64(len(v.st) - 1)
	s := v.hi
	for n < len(b) {
		st := v.st[s&m]
		run := uint64(1)
		for run <= ackRunMax && s-run+1 > v.lo && v.st[(s-run)&m] == st {
			run++
		}
		b[n] = byte(st)<<6 | byte(run-1)
		n++
		if s-run+1 == v.lo {
			return n, v.lo
		}
		s -= run
	}
	return n, s + 1
}

// sent remembers the acknowledgement in our packet seq.
func (v *ackVecRecv) sent(seq, ackNo, low uint64) {
	v.records[seq%ackRecords] = ackRecord{seq: seq, ackNo: ackNo, low: low, valid: true}
}

// ackAcked handles an acknowledgement of our acknowledgement packet seq:
// the peer has seen the state up to that packet's Acknowledgement Number,
// so state at or below it is trimmed (RFC 4340 §11.4.2) — unless that
// vector was cut short above lo, in which case trimming would hide packets
// the peer never heard about.
func (v *ackVecRecv) ackAcked(seq uint64) {
	r := &v.records[seq%ackRecords]
	if !r.valid || r.seq != seq {
		return
	}
	r.valid = false
	if !v.any || r.low > v.lo || r.ackNo < v.lo {
		return
	}
	if r.ackNo >= v.hi {
		// Everything reported: keep only the Acknowledgement Number
		// itself (the vector always describes at least it).
		v.lo = v.hi
		return
	}
	v.lo = r.ackNo + 1
}

// span returns the number of packets of state kept.
func (v *ackVecRecv) span() int {
	if !v.any {
		return 0
	}
	return int(v.hi - v.lo + 1)
}
