package transport

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
)

// TestHandshakeRTOCause: an unanswered Initial's timeouts are counted as
// RTOHandshake, so the causes always add up to RTOs.
func TestHandshakeRTOCause(t *testing.T) {
	now := clock.Start
	ep := NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(1, 2))})
	c, err := ep.Dial(now, netip.MustParseAddrPort("192.0.2.1:5201"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	for i := 0; i < 3; i++ {
		for {
			if n, _, _ := ep.Transmit(now, buf); n == 0 {
				break
			}
		}
		now = now.Add(5 * time.Second)
		ep.OnDeadline(now)
	}
	st := c.Stats()
	sum := uint64(0)
	for _, n := range st.RTOCauses {
		sum += n
	}
	if st.RTOs == 0 || st.RTOCauses[RTOHandshake] != st.RTOs || sum != st.RTOs {
		t.Errorf("RTOs %d causes %v, want every RTO counted as handshake", st.RTOs, st.RTOCauses)
	}
}
