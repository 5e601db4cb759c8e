package transport

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestDgramPLPMTUD: a datagram connection with discovery on a path that
// carries 4000-byte datagrams finds a size within the search granularity
// below it, for each kind of controller (the window controllers at a rate
// below the path's, so that its unlimited queue stays short); its source's datagrams grow with
// it and the receiver, whose queue was set up for the handshake's size,
// takes them; the probes the path dropped are no congestion signal (no
// loss, no timeout: the path has no other loss and no queue limit).
func TestDgramPLPMTUD(t *testing.T) {
	for _, tc := range []struct {
		cc   string
		rate float64
	}{
		{cc: "ccid2", rate: 4e6},
		{cc: "ccid3:tgran=1ms"},
		{cc: "reno", rate: 4e6},
		{cc: "none", rate: 4e6},
	} {
		t.Run(tc.cc, func(t *testing.T) {
			mtu := 4000
			n := newDnet(t, 1, mtuPath(&mtu), mtuPath(&mtu), DgramConfig{MaxDatagram: 9000})
			largest := 0
			cfg := DgramConfig{MaxDatagram: DefaultMaxDatagram, CC: tc.cc, Rate: tc.rate, PLPMTUMax: 9000}
			cli, srv := n.dial(cfg, &seqSource{size: 1 << 16}, false)
			buf := make([]byte, 1<<16)
			n.app = func(n *dnet) {
				for *srv != nil {
					k, ok := (*srv).Recv(buf)
					if !ok {
						break
					}
					largest = max(largest, k)
				}
			}
			n.run(20*time.Second, nil)
			cs, ss := cli.Stats(), (*srv).Stats()
			if got := cs.PLPMTU.Size; got > mtu || got <= mtu-plpmtudGranularity {
				t.Errorf("discovered size = %d, want (%d, %d] (%+v)", got, mtu-plpmtudGranularity, mtu, cs.PLPMTU)
			}
			if got, want := cs.PLPMTU.State, "SEARCH_COMPLETE"; got != want {
				t.Errorf("state = %q, want %q", got, want)
			}
			if cs.PLPMTU.ProbesLost == 0 {
				t.Errorf("no probe size given up: the path should have dropped some")
			}
			if got, want := largest, cli.MaxPayload(); got != want || want <= DefaultMaxDatagram {
				t.Errorf("largest datagram received = %d bytes, want the discovered payload %d (> %d)", got, want, DefaultMaxDatagram)
			}
			if cs.Lost != 0 || cs.LostRTO != 0 || ss.RecvDropped != 0 {
				t.Errorf("probe loss reached the flow: lost %d, lost at RTO %d, receive queue drops %d", cs.Lost, cs.LostRTO, ss.RecvDropped)
			}
			t.Logf("%+v; %d datagrams, %.1f Mbit/s", cs.PLPMTU, ss.RecvDelivered, float64(ss.RecvBytes)*8/20e6)
		})
	}
}

// TestDgramPLPMTUDBlackHole: the path's MTU falls under a datagram
// connection that uses datagrams of more than 8000 bytes: after MAX_PROBES timeouts it
// falls back to BASE_PLPMTU, searches again, and its datagrams get through
// at the new size.
func TestDgramPLPMTUDBlackHole(t *testing.T) {
	mtu := 9000
	n := newDnet(t, 2, mtuPath(&mtu), mtuPath(&mtu), DgramConfig{MaxDatagram: 9000})
	cli, srv := n.dial(DgramConfig{MaxDatagram: DefaultMaxDatagram, PLPMTUMax: 9000, Rate: 4e6}, &seqSource{size: 1 << 16}, true)
	if !n.run(20*time.Second, func() bool { return cli.Stats().PLPMTU.Size > 8000 && (*srv).Stats().RecvBytes > 1<<20 }) {
		t.Fatalf("never sent datagrams of more than 8000 bytes: %+v", cli.Stats().PLPMTU)
	}
	mtu = 1400
	n.run(60*time.Second, func() bool { return cli.Stats().PLPMTU.State == "SEARCH_COMPLETE" })
	before := (*srv).Stats().RecvBytes
	n.run(5*time.Second, nil)
	st := cli.Stats().PLPMTU
	if st.BlackHoles != 1 {
		t.Errorf("black holes = %d, want 1", st.BlackHoles)
	}
	if st.Size > mtu || st.Size <= mtu-plpmtudGranularity {
		t.Errorf("size after the black hole = %d, want (%d, %d] (%+v)", st.Size, mtu-plpmtudGranularity, mtu, st)
	}
	if got := (*srv).Stats().RecvBytes - before; got < 1<<20 {
		t.Errorf("%d bytes received in 5 s after the search: the flow did not recover", got)
	}
}

// TestPLPMTUDRounds: on a path that carries every size, discovery sends
// one probe per size it tries (the table's two for the peer's family, then
// MAX_PLPMTU), one round trip each, in both modes: the first probe, sent as soon as the client's handshake
// completes, races the packet that confirms the client's address at the
// server, and must be answered all the same (its acknowledgement is
// smaller than it), not cost a probe timeout.
func TestPLPMTUDRounds(t *testing.T) {
	mtu := 1 << 16
	for _, mode := range []string{"stream", "datagram"} {
		t.Run(mode, func(t *testing.T) {
			var st func() PLPMTUStats
			var run func(time.Duration, func() bool) bool
			var est clock.Time
			var now func() clock.Time
			if mode == "stream" {
				h := newHarness(t, 1, mtuPath(&mtu), mtuPath(&mtu), Config{PLPMTUMax: 9000})
				c := plpmtudDial(h, 1<<30)
				st, now = func() PLPMTUStats { return c.Stats().PLPMTU }, func() clock.Time { return h.now }
				run = func(d time.Duration, done func() bool) bool { return h.run(d, done) }
				if !run(5*time.Second, c.Established) {
					t.Fatal("no handshake")
				}
			} else {
				n := newDnet(t, 1, mtuPath(&mtu), mtuPath(&mtu), DgramConfig{MaxDatagram: 9000})
				c, _ := n.dial(DgramConfig{MaxDatagram: DefaultMaxDatagram, PLPMTUMax: 9000, Rate: 1e6}, &seqSource{size: 1 << 16}, true)
				st, now = func() PLPMTUStats { return c.Stats().PLPMTU }, func() clock.Time { return n.now }
				run = n.run
			}
			est = now()
			if !run(10*time.Second, func() bool { return st().State == "SEARCH_COMPLETE" }) {
				t.Fatalf("search not complete: %+v", st())
			}
			took := now().Sub(est)
			rounds := uint64(len(plpmtudSteps[0]) + 1) // the family's table, then MAX_PLPMTU
			if s := st(); s.Size != 9000 || s.Probes != rounds {
				t.Errorf("reached %d bytes with %d probes in %v, want 9000 with %d (one a size, none timed out)", s.Size, s.Probes, took, rounds)
			}
			t.Logf("%+v in %v", st(), took)
		})
	}
}
