package transport

import (
	"fmt"
	"net/netip"
	"testing"

	"cclab/clock"
)

// TestConnSpecCache: connections of one spec pair share one parse; a bad
// spec is refused by Dial with Config.Validate's error; the cache holds at
// most maxConnSpecs pairs however many a program (or a server's Configure)
// uses, and a pair evicted and used again still works; the Initial asks
// for D-SACK exactly when the strategy uses it.
func TestConnSpecCache(t *testing.T) {
	ep := NewEndpoint(EndpointConfig{})
	peer := netip.MustParseAddrPort("10.0.0.2:2")
	dial := func(cc, rec string) (*Conn, error) { return ep.Dial(clock.Start, peer, Config{CC: cc, Recovery: rec}) }
	a, err := dial("cubic", "rack")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := dial("cubic", "rack")
	if a.spec != b.spec {
		t.Errorf("two conns of one spec pair: parsed twice, want one shared parse")
	}
	for _, tc := range []struct{ cc, rec string }{{"nosuchcc", "rack"}, {"reno", "rack:dupthresh=0"}, {"cubic:beta=7", "sack"}} {
		_, got := dial(tc.cc, tc.rec)
		cfg := ep.connConfig(Config{CC: tc.cc, Recovery: tc.rec})
		want := cfg.Validate()
		if got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("Dial(%s, %s) error %v, want Validate's %v", tc.cc, tc.rec, got, want)
		}
	}
	for i := range 3 * maxConnSpecs {
		if _, err := dial(fmt.Sprintf("reno:iw=%d", 2+i), "newreno"); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, s := range ep.specs {
		if s != nil {
			n++
		}
	}
	if n > maxConnSpecs {
		t.Errorf("cache holds %d spec pairs, want at most %d", n, maxConnSpecs)
	}
	if c, err := dial("cubic", "rack"); err != nil || c.spec.cc != "cubic" || c.spec.rec != "rack" {
		t.Errorf("evicted pair dialed again: %v, spec %+v", err, c.spec)
	}
	for _, tc := range []struct {
		rec  string
		want bool
	}{{"rack", true}, {"newreno", false}, {"sack", false}, {"sack:undo", true}, {"prr:adaptive", true}} {
		c, err := dial("reno", tc.rec)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, DefaultMaxDatagram)
		n, _ := c.transmit(clock.Start, buf)
		var p packet
		if r := decodePacket(buf[:n], &p); r != RejectNone || p.typ != typeInitial {
			t.Fatalf("%s: first datagram not an Initial (%v)", tc.rec, r)
		}
		if got := p.hsFlags&hsDSACK != 0; got != tc.want {
			t.Errorf("%s: Initial asks for D-SACK %v, want %v", tc.rec, got, tc.want)
		}
	}
}
