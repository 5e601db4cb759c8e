package liverun

import (
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/plan"
	"cclab/transport"
)

// TestReceiverLimits: a run's flows all come from one address; with the
// limits ReceiverLimits sizes for a plan of that many flows, every one of
// their handshakes, started at once from one source, completes, and none
// is refused or evicted; with the transport's defaults the per-source
// limit (128) refuses the rest (the test checks it can fail).
func TestReceiverLimits(t *testing.T) {
	const flows = 600
	p := &plan.Plan{Flows: make([]plan.Flow, flows)}
	for _, tc := range []struct {
		name    string
		limits  transport.EndpointConfig
		wantAll bool
	}{
		{"sized", ReceiverLimits(p), true},
		{"defaults", transport.EndpointConfig{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ecfg := tc.limits
			ecfg.Server = true
			srv := transport.NewEndpoint(ecfg)
			cli := transport.NewEndpoint(transport.EndpointConfig{})
			srvAddr, cliAddr := netip.MustParseAddrPort("10.0.0.2:5201"), netip.MustParseAddrPort("10.0.0.1:40000")
			now := clock.Time(time.Second)
			conns := make([]*transport.Conn, flows)
			for i := range conns {
				c, err := cli.Dial(now, srvAddr, transport.Config{})
				if err != nil {
					t.Fatal(err)
				}
				conns[i] = c
			}
			buf := make([]byte, 1<<16)
			established := func() (n int) {
				for _, c := range conns {
					if c.Established() {
						n++
					}
				}
				return n
			}
			// Exchange the queued datagrams each millisecond until all
			// connected or 20 s passed.
			for end := now.Add(20 * time.Second); now.Before(end) && established() < flows; now = now.Add(time.Millisecond) {
				// One client datagram at a time, each answered at once, as
				// a driver's batches interleave (the server's queue of
				// stateless replies is bounded).
				for {
					k, _, cp := cli.Transmit(now, buf)
					if k == 0 {
						break
					}
					srv.Receive(now, cliAddr, cp, buf[:k])
					for {
						k, _, cp := srv.Transmit(now, buf)
						if k == 0 {
							break
						}
						cli.Receive(now, srvAddr, cp, buf[:k])
					}
				}
				cli.OnDeadline(now)
				srv.OnDeadline(now)
				for srv.Accept() != nil {
				}
			}
			st := srv.Stats()
			got := established()
			t.Logf("%d of %d connected, evicted %d, refused %d, cookies %d", got, flows, st.Evicted, st.RefusedFull, st.CookiesSent)
			if all := got == flows && st.Evicted == 0 && st.RefusedFull == 0; all != tc.wantAll {
				t.Errorf("%d of %d connected, evicted %d, refused %d: all admitted = %v, want %v (%+v)", got, flows, st.Evicted, st.RefusedFull, all, tc.wantAll, st)
			}
		})
	}
}
