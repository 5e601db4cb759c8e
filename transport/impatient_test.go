package transport

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestImpatient checks which ACKs of a recovery episode restart the
// retransmission timer: by default (RFC 6298 §5.3) every ACK that moves
// snd.una; with impatient only the episode's first partial ACK, the ACK
// that starts the episode included when it moves snd.una (ns-3 3.37's
// ProcessAck: NewAck(ackNumber, m_isFirstPartialAck) in CA_RECOVERY).
// 20 segments out, 1-9 lost.
func TestImpatient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rec      string
		entryCum int  // the entering ACK's cumulative point, segments
		want     bool // the second partial ACK restarts the timer
	}{
		{"RFC 6298", "prr:flight=pipe,bound=ns3,partialrxt", 0, true},
		{"impatient", "prr:flight=pipe,bound=ns3,partialrxt,impatient", 0, false},
		{"RFC 6298, entry advances", "prr:flight=pipe,bound=ns3,partialrxt", 1, true},
		{"impatient, entry advances", "prr:flight=pipe,bound=ns3,partialrxt,impatient", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, tc.rec, 20, 0)
			step := func() clock.Time {
				f.now = f.now.Add(10 * time.Millisecond)
				return f.c.rtoAt
			}
			step()
			sackAck(f, tc.entryCum, 10, 11, 12) // enters recovery
			if !f.c.rec.InRecovery() {
				t.Fatalf("not in recovery after three SACKed segments")
			}
			if tc.entryCum == 0 {
				// The first partial ACK: both restart the timer.
				before := step()
				sackAck(f, 1, upTo(10, 14)...)
				if f.c.rtoAt == before {
					t.Fatalf("the first partial ACK did not restart the timer (%v)", before)
				}
			}
			before := step()
			sackAck(f, 2, upTo(10, 15)...) // a further partial ACK
			if got := f.c.rtoAt != before; got != tc.want {
				t.Errorf("the further partial ACK restarted the timer: got %v, want %v (deadline %v, before %v)", got, tc.want, f.c.rtoAt, before)
			}
			if !f.c.rec.InRecovery() {
				t.Errorf("left recovery on a partial ACK")
			}
		})
	}
}
