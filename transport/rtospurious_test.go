package transport

import (
	"testing"

	"cclab/ecn"
)

// TestSpuriousRTO validates the RTO-cause classification on scripted traces
// whose true cause is known: four segments sent, no ACK until the RTO, which
// retransmits segment 0; then one cumulative ACK of everything arrives.
//
//   - delay spike: the ACK echoes the originals' timestamp (RFC 3522): the
//     timeout was spurious;
//   - ACK loss: the originals arrived but their ACKs were lost; the ACK
//     answers the retransmission (its echo) and reports it duplicated with
//     a D-SACK (RFC 3708): spurious;
//   - data loss: the ACK answers the retransmission, no D-SACK: the
//     provisional cause (burst_loss: four segments, none SACKed) stands.
func TestSpuriousRTO(t *testing.T) {
	for _, tc := range []struct {
		name     string
		oldEcho  bool
		dsack    bool
		spurious bool
	}{
		{"delay spike", true, false, true},
		{"ack loss", false, true, true},
		{"data loss", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := smallFixture(t, "sack:undo", 10, 4)
			orig := f.sent[3].ts
			f.runTimers(f.c.rtoAt)
			if f.c.stats.RTOs != 1 || f.c.stats.RTOCauses[RTOBurstLoss] != 1 {
				t.Fatalf("RTO not counted as burst_loss: %v", f.c.stats.RTOCauses)
			}
			sent := f.drain()
			if len(sent) == 0 || sent[0].off != 0 {
				t.Fatalf("RTO did not retransmit segment 0")
			}
			echo := sent[0].ts
			if tc.oldEcho {
				echo = orig
			}
			p := packet{typ: typeShort, dcid: f.c.localCID, flags: flagACK, pn: f.pn, ts: 2, tsecr: echo, cumAck: uint64(4 * testMSS), window: 1 << 30}
			f.pn++
			if tc.dsack {
				p.hasDSACK = true
				p.dsack = seg(0)
			}
			f.recv(&p, ecn.NotECT)
			got := f.c.stats.RTOCauses
			want := [NumRTOCauses]uint64{RTOBurstLoss: 1}
			if tc.spurious {
				want = [NumRTOCauses]uint64{RTOSpurious: 1}
			}
			if got != want {
				t.Errorf("RTO causes: got %v, want %v", got, want)
			}
			if tc.spurious && f.c.stats.Undos != 1 {
				t.Errorf("spurious RTO not undone (undo on): undos %d", f.c.stats.Undos)
			}
		})
	}
}
