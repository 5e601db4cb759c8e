package transport

import (
	"testing"
	"time"

	"cclab/ecn"
)

// TestAckFirst: Config.AckFirst against ns-3.37's receiver
// (TcpSocketBase::ReceivedData with m_delAckCount set to m_delAckMaxCount
// at the handshake's end, tcp-socket-base.cc:2404-2406 and 3560-3619):
// the first data segment is acknowledged at once, in order or not; an
// out-of-order segment and one that fills a gap are acknowledged at once
// with or without the setting; the other in-order segments are paired
// after the first ACK, and a lone one waits for the delayed-ACK timer.
func TestAckFirst(t *testing.T) {
	const none = -1
	ns3 := Config{AckEvery: 2, DelayedAck: 200 * time.Millisecond}
	first := ns3
	first.AckFirst = true
	for _, tc := range []struct {
		name   string
		cfg    Config
		arrive []int // segments in arrival order
		// ack[i] is the cumulative ACK (a segment index: everything before
		// it acknowledged) sent at once on arrival i, or none.
		ack []int
		// timer: a delayed ACK is armed after the last arrival.
		timer bool
	}{
		{"off: the first segment waits for its pair", ns3, []int{0, 1, 2}, []int{none, 2, none}, true},
		{"ack_first: the first at once, then (1, 2), (3, 4)", first, []int{0, 1, 2, 3, 4}, []int{1, none, 3, none, 5}, false},
		{"ack_first: a lone second segment waits for the timer", first, []int{0, 1}, []int{1, none}, true},
		{"ack_first: the first out of order, then the gap filled", first, []int{1, 0, 2, 3}, []int{0, 2, none, 4}, false},
		{"off: out of order and the gap filled at once", ns3, []int{1, 0, 2, 3}, []int{0, 2, none, 4}, false},
		{"ack_first: a hole later follows the usual rules", first, []int{0, 1, 2, 4, 3, 5}, []int{1, none, 3, 3, 5, none}, true},
		{"ack_first with every segment acknowledged", Config{AckEvery: 1, AckFirst: true}, []int{0, 1}, []int{1, 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSrvFixture(t, tc.cfg, true)
			for i, k := range tc.arrive {
				f.now = f.now.Add(time.Millisecond)
				f.data(k, 0, ecn.NotECT)
				a := f.drain()
				got := none
				if len(a) > 1 {
					t.Fatalf("arrival %d (segment %d): %d packets, want at most one ACK", i, k, len(a))
				}
				if len(a) == 1 {
					got = int(a[0].cumAck / (seg(1).Start - seg(0).Start))
					if a[0].cumAck != seg(got).Start {
						t.Fatalf("arrival %d (segment %d): cumulative ACK %d is not a segment edge", i, k, a[0].cumAck)
					}
				}
				if want := tc.ack[i]; got != want {
					t.Errorf("arrival %d (segment %d): ACK at once up to segment %d, want %d (-1: none)", i, k, got, want)
				}
			}
			armed := f.ep.Deadline() == f.now.Add(tc.cfg.DelayedAck)
			if armed != tc.timer {
				t.Errorf("delayed-ACK timer armed after the last arrival: %v, want %v (deadline %v, now %v)", armed, tc.timer, f.ep.Deadline(), f.now)
			}
		})
	}
}
