package sim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"cclab/clock"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// corrupter stands in front of a host's receiver and tampers with the
// datagrams longer than 1000 bytes (stream data: the transport has no
// checksum of its own, as UDP's is not modelled), counting them from 1: it
// flips the last flipN bytes (1 if 0) of the flip-th, drops the drop-th (so that the ones
// after it arrive out of order and wait in the receive ring), and gives the
// paste-th the last 1000 bytes of the one three before it (stream bytes, but
// of another offset: misordered or duplicated data).
type corrupter struct {
	next              Receiver
	flip, drop, paste int
	flipN             int
	seen              int
	tails             [3][]byte // the last 1000 bytes of the previous three
}

func (c *corrupter) Receive(now clock.Time, p *qdisc.Packet) {
	if len(p.Buf) > 1000 {
		c.seen++
		tail := p.Buf[len(p.Buf)-1000:]
		slot := &c.tails[c.seen%3] // the one three before, replaced by this one
		old := *slot
		*slot = bytes.Clone(tail)
		switch c.seen {
		case c.drop:
			return
		case c.flip:
			for i := range max(c.flipN, 1) {
				p.Buf[len(p.Buf)-1-i] ^= 0x40
			}
		case c.paste:
			copy(tail, old)
		}
	}
	c.next.Receive(now, p)
}

// TestIntegrityCatchesCorruption: transfers whose stream arrives intact are
// verified (also after a loss, the data behind it waiting out of order); one
// flipped byte, or stream bytes delivered at the wrong offset, make the
// transfer a mismatch, whether the datagram arrived in order (checked in the
// datagram) or out of order (checked in the receive ring). With the full
// payload (Sim.FullPayload) one flipped byte is caught; with stamps only
// (the default) bytes flipped over a stamp are: the last 600 of the
// datagram, which hold at least one.
func TestIntegrityCatchesCorruption(t *testing.T) {
	for _, full := range []bool{false, true} {
		flipN := transport.SampleStride + 88
		if full {
			flipN = 1
		}
		testIntegrity(t, full, flipN)
	}
}

func testIntegrity(t *testing.T, full bool, flipN int) {
	for _, tc := range []struct {
		name                 string
		flip, drop, paste    int // which large datagrams to tamper with (corrupter); 0 = none
		verified, mismatched int
	}{
		{"intact", 0, 0, 0, 3, 0},
		{"bytes flipped", 50, 0, 0, 2, 1},
		{"lost and retransmitted", 0, 40, 0, 3, 0},
		{"bytes flipped out of order", 45, 40, 0, 2, 1},
		{"bytes of another offset", 0, 0, 50, 2, 1},
		{"bytes of another offset out of order", 0, 40, 45, 2, 1},
	} {
		t.Run(fmt.Sprintf("%s/full=%v", tc.name, full), func(t *testing.T) {
			s := runTransfers(t, 1, func(s *Sim, db *Dumbbell) {
				s.FullPayload = full
				s.AddTCPFlow("f", db.Senders[0], db.Receivers[0], onoff(t, "onoff:size=100kB,off=100ms,count=3"),
					transport.Config{}, clock.Start)
				if tc.flip+tc.drop+tc.paste > 0 {
					r := db.Receivers[0]
					r.Receiver = &corrupter{next: r.Receiver, flip: tc.flip, flipN: flipN, drop: tc.drop, paste: tc.paste}
				}
			})
			if s.Integrity.Verified != tc.verified || s.Integrity.Mismatched != tc.mismatched {
				t.Errorf("verified, mismatched got %d, %d, want %d, %d", s.Integrity.Verified, s.Integrity.Mismatched,
					tc.verified, tc.mismatched)
			}
		})
	}
}

// TestIntegrityManyConnsOneReceiver: one receiving host accepts several
// connections that finish in another order than it accepted them (a later
// one first, while those before and after it still run), so its list of
// accepted connections (Stack.readAll) drops finished ones from the middle
// and keeps the live ones behind them: every transfer is verified once,
// and none stays in the list.
func TestIntegrityManyConnsOneReceiver(t *testing.T) {
	var dst *Node
	s := runTransfers(t, 4, func(s *Sim, db *Dumbbell) {
		dst = db.Receivers[0]
		for i, size := range []string{"600kB", "50kB", "300kB", "20kB"} { // accepted in this order
			s.AddTCPFlow(fmt.Sprint("f", i), db.Senders[i], dst, onoff(t, "onoff:size="+size+",off=1ms,count=1"),
				transport.Config{}, clock.Start.Add(time.Duration(i)*5*time.Millisecond))
		}
	})
	if s.Integrity.Verified != 4 || s.Integrity.Mismatched != 0 {
		t.Errorf("verified, mismatched got %d, %d, want 4, 0", s.Integrity.Verified, s.Integrity.Mismatched)
	}
	if got := len(s.Stacks()[dst.ID].accepted); got != 0 {
		t.Errorf("receiver's accepted connections got %d, want 0", got)
	}
}

// runTransfers builds a 10 Mbit/s dumbbell of the given number of sender
// and receiver hosts, lets add set up the transfers, runs until they have
// all finished (failing t if that takes over 30 s) and 10 s more, so that
// the receiving sides close too, and returns the simulation.
func runTransfers(t *testing.T, flows int, add func(s *Sim, db *Dumbbell)) *Sim {
	t.Helper()
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: flows, Rate: 10e6, Delay: 10 * time.Millisecond, Queue: "droptail:50p"},
		Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db.Net, nil)
	add(s, db)
	e.RunUntilOrTimeout(s.AllFinished, clock.Start.Add(30*time.Second))
	if !s.AllFinished() {
		t.Fatal("transfers did not finish in 30 s")
	}
	e.RunFor(10 * time.Second)
	return s
}

// onoff returns the stream generator of the traffic spec.
func onoff(t *testing.T, spec string) traffic.StreamGen {
	t.Helper()
	g, err := traffic.New(spec, traffic.Env{Rand: traffic.Stream(1, "t")})
	if err != nil {
		t.Fatal(err)
	}
	return g.(traffic.StreamGen)
}
