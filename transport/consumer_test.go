package transport

import (
	"bytes"
	"fmt"
	"testing"

	"cclab/ecn"
)

// recordingConsumer keeps what a Consumer is given.
type recordingConsumer struct {
	next  uint64 // the offset the next call must start at
	data  []byte
	calls int
	gaps  int // calls not starting where the previous one ended
}

func (r *recordingConsumer) Consume(off uint64, p []byte) {
	if off != r.next {
		r.gaps++
	}
	r.next = off + uint64(len(p))
	r.data = append(r.data, p...)
	r.calls++
}

// TestConsumer: a Consumer receives the stream in order and complete:
// bytes buffered before SetConsumer at once, out-of-order data once the hole
// is filled (from the ring), in-order data straight from the datagram (no
// ring needed); every byte counts as read. The ACKs the peer sees are the
// ones of an application that Reads after every datagram.
func TestConsumer(t *testing.T) {
	order := []int{0, 2, 3, 1, 4, 5, 7, 6, 8}
	type step struct {
		consumed int    // bytes handed over so far
		acks     string // the ACKs sent after the segment
	}
	run := func(consumer bool) ([]step, *recordingConsumer, *srvFixture) {
		f := newSrvFixture(t, Config{}, true)
		r := &recordingConsumer{}
		var read []byte
		buf := make([]byte, 3*testMSS)
		var steps []step
		for i, k := range order {
			f.data(k, 0, ecn.NotECT)
			switch {
			case !consumer:
				n := f.srv.Read(buf)
				read = append(read, buf[:n]...)
			case i == 0:
				// The first segment waits to be read: SetConsumer hands it over.
				if got := f.srv.Readable(); got != testMSS {
					t.Fatalf("before SetConsumer: Readable() = %d, want %d", got, testMSS)
				}
				f.srv.SetConsumer(r)
			}
			f.drain()
			var acks []string
			for _, a := range f.acks() {
				acks = append(acks, fmt.Sprintf("ack %d win %d sack %v", a.cumAck, a.window, a.blocks[:a.nBlocks]))
			}
			steps = append(steps, step{len(r.data) + len(read), fmt.Sprint(acks)})
		}
		if !consumer {
			r.data = read
		}
		return steps, r, f
	}
	want, _, _ := run(false)
	got, r, f := run(true)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("after segment %d: consumer %+v, want as a reader %+v", order[i], got[i], want[i])
		}
	}
	total := seg(len(order)).Start
	stream := make([]byte, total)
	NewPatternSource(9).Fill(0, stream)
	if !bytes.Equal(r.data, stream) || r.gaps != 0 {
		t.Errorf("consumed %d bytes in %d calls with %d gaps; want the %d stream bytes in order", len(r.data), r.calls, r.gaps, total)
	}
	if got := f.srv.Stats().BytesRead; got != total {
		t.Errorf("Stats().BytesRead = %d, want %d", got, total)
	}
	if n := f.srv.Readable(); n != 0 {
		t.Errorf("Readable() = %d with a consumer, want 0", n)
	}
}

// TestConsumerBypassesRing: in-order data to a consumer that took every
// earlier byte never needs the receive ring.
func TestConsumerBypassesRing(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	r := &recordingConsumer{}
	f.srv.SetConsumer(r)
	for k := range 5 {
		f.data(k, 0, ecn.NotECT)
	}
	if f.srv.rbuf.b != nil {
		t.Errorf("receive ring of %d bytes taken for in-order data", len(f.srv.rbuf.b))
	}
	if got, want := len(r.data), int(seg(5).Start); got != want || r.gaps != 0 {
		t.Errorf("consumed %d bytes with %d gaps, want %d in order", got, r.gaps, want)
	}
}
