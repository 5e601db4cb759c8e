package relay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"cclab/internal/hostlimit"
	"cclab/link"
)

func TestLateHistAbove(t *testing.T) {
	var h LateHist
	for _, d := range []time.Duration{0, time.Millisecond, 9 * time.Millisecond, 11 * time.Millisecond, 50 * time.Millisecond, time.Second} {
		h.Add(d)
	}
	if got, want := h.Above(10*time.Millisecond), int64(3); got != want {
		t.Errorf("Above(10ms): got %d, want %d", got, want)
	}
	if got, want := h.Above(0), int64(5); got != want {
		t.Errorf("Above(0): got %d, want %d", got, want)
	}
	if got := h.Above(time.Hour); got != 0 {
		t.Errorf("Above(1h): got %d, want 0", got)
	}
}

// TestHostReportStarvedRelay: a relay whose writes are made late on
// purpose (Config.InjectWriteLate, as a starved relay's would be) reports
// itself host-limited and its summary says so. Without the injection only
// the counts are checked: whether real writes are late depends on the
// machine's load.
func TestHostReportStarvedRelay(t *testing.T) {
	for _, inject := range []time.Duration{0, 50 * time.Millisecond} {
		var sum bytes.Buffer
		r := relayLate(t, inject, Config{Summary: &sum}, starvedWrites)
		const n = starvedWrites
		h := r.HostReport()
		if h.Role != "relay" || h.Writes.Count != n || h.Sent != n || h.Received != n {
			t.Errorf("inject %v: report %+v: want role relay, %d writes, sent and received", inject, h, n)
		}
		r.Close()
		if inject == 0 {
			continue
		}
		if !strings.Contains(h.Codes(), hostlimit.CodeRelayLate) || h.Writes.Late != n {
			t.Errorf("inject %v: codes %q, %d late writes: want relay_late, all %d late", inject, h.Codes(), h.Writes.Late, n)
		}
		if !strings.Contains(sum.String(), "warning: host-limited run (relay): relay_late") {
			t.Errorf("inject %v: the summary does not warn:\n%s", inject, sum.String())
		}
	}
}

// starvedWrites is how many datagrams relayLate relays.
const starvedWrites = 200

// relayLate relays n datagrams forward through a relay with one 1 ms hop
// whose every write is made inject late (Config.InjectWriteLate), with
// cfg's writers and interval, and returns it, running.
func relayLate(t *testing.T, inject time.Duration, cfg Config, n int) *Relay {
	t.Helper()
	tn := memNet()
	dst := newSink(t, tn, false)
	cfg.Target, cfg.InjectWriteLate = dst.conn.LocalAddr().String(), inject
	cfg.Hops = [2][]link.Config{{mkHop(t, "delay=1ms")}}
	r := startRelay(t, tn, cfg)
	sendAll(t, dial(t, tn, r.Addr()), dst, n, 10, 200, 3*time.Second)
	return r
}
