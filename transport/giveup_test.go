package transport

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestGiveUpRule: when the path goes black mid-transfer, the sender keeps
// retransmitting past IdleTimeout (on today's code it died of the idle
// timeout after 2 minutes of silence) and gives up with ErrGiveUp GiveUp
// after its first unanswered RTO; the receiver, waiting for the rest of the
// stream, waits max(IdleTimeout, GiveUp).
func TestGiveUpRule(t *testing.T) {
	const giveUp = 5 * time.Minute
	h := newHarness(t, 51, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, Config{GiveUp: giveUp})
	var black clock.Time
	drop := func(b []byte) bool { return black != clock.Never && h.now >= black }
	h.paths[0].Drop, h.paths[1].Drop = drop, drop
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(1), 10<<20)
	var srv *Conn
	buf := make([]byte, 64<<10)
	h.app = func(h *harness) {
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil {
			for srv.Read(buf) > 0 {
			}
			if black == clock.Never && srv.Stats().BytesDelivered > 100_000 {
				black = h.now
			}
		}
	}
	h.run(DefaultIdleTimeout+30*time.Second, func() bool { return cli.Done() })
	if cli.Done() || srv.Done() {
		t.Fatalf("a retransmitting sender died of the idle timeout: client %v, server %v (at %v, black since %v)", cli.Err(), srv.Err(), h.now, black)
	}
	h.run(time.Hour, func() bool { return cli.Done() && srv.Done() })
	first := cli.rtoSince
	if cli.Err() != ErrGiveUp {
		t.Fatalf("client err %v, want ErrGiveUp", cli.Err())
	}
	st := cli.Stats()
	if got := st.Finished.Sub(black); got < giveUp || got > giveUp+10*time.Second {
		t.Errorf("client gave up %v after the path went black, want GiveUp %v after the first unanswered RTO (~0.2 s later)", got, giveUp)
	}
	if first == clock.Never {
		t.Errorf("give-up clock not running at the end")
	}
	if srv.Err() != ErrIdleTimeout || srv.Stats().Finished.Sub(black) < giveUp {
		t.Errorf("receiver: err %v after %v, want ErrIdleTimeout after >= GiveUp %v of silence", srv.Err(), srv.Stats().Finished.Sub(black), giveUp)
	}
}

// TestGiveUpRange: Config.GiveUp outside its range is an error naming it.
func TestGiveUpRange(t *testing.T) {
	for _, d := range []time.Duration{time.Millisecond, 25 * time.Hour} {
		c := Config{GiveUp: d}
		c.fill(DefaultConfig())
		if err := c.Validate(); err == nil {
			t.Errorf("GiveUp=%v accepted", d)
		}
	}
}
