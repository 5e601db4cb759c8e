package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestHSGate: the per-source bound refuses at once; waiting connections
// get freed slots in turn across sources, not by arrival alone; a wait
// ends at the handshake deadline.
func TestHSGate(t *testing.T) {
	g := newHSGate(2, 2)
	queued := make(chan struct{}, 8)
	g.onQueue = func() { queued <- struct{}{} }
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")
	ctx := context.Background()
	far := time.Now().Add(time.Minute)
	for range 2 {
		if err := g.acquire(ctx, a, far); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.acquire(ctx, a, far); !errors.Is(err, errHSBusy) || !strings.Contains(err.Error(), "-max-handshakes-per-source") {
		t.Fatalf("3rd of one source: %v, want a refusal naming -max-handshakes-per-source", err)
	}
	// b queues twice, then c once: freed slots go b, c, b (in turn), not b, b, c.
	got := make(chan netip.Addr, 3)
	wait := func(src netip.Addr) {
		go func() {
			if err := g.acquire(ctx, src, far); err == nil {
				got <- src
			}
		}()
		<-queued
	}
	wait(b)
	wait(b)
	wait(c)
	var order []netip.Addr
	g.release(a)
	order = append(order, <-got)
	g.release(a)
	order = append(order, <-got)
	g.release(order[0]) // b's first handshake ends: its second gets the slot
	order = append(order, <-got)
	if want := []netip.Addr{b, c, b}; !equalAddrs(order, want) {
		t.Errorf("slots given to %v, want %v (in turn across sources)", order, want)
	}
	// With every slot taken a wait ends at the deadline.
	if err := g.acquire(ctx, a, time.Now()); !errors.Is(err, errHSBusy) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("wait past the deadline: %v, want a refusal naming the deadline", err)
	}
}

func equalAddrs(a, b []netip.Addr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSlowloris: 16 silent control connections from one source address
// (more than -max-handshakes' 16 slots' per-source share) leave the
// handshake slots to others: a client from another address authenticates.
func TestSlowloris(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for range 16 {
		c, err := d.Dial("tcp", a.Addr().String())
		if err != nil {
			t.Skipf("cannot connect from 127.0.0.2 (no loopback /8?): %v", err)
		}
		t.Cleanup(func() { c.Close() })
	}
	// 4 in their handshake, 12 refused at once (slots are free for others,
	// so none waits).
	st := waitStats(t, a, func(st Stats) bool { return st.Busy >= 12 })
	if st.Handshaking != DefaultMaxHandshakesPerSource {
		t.Errorf("handshakes of the silent source: %d, want %d", st.Handshaking, DefaultMaxHandshakesPerSource)
	}
	start := time.Now()
	c := dial(t, a, creds)
	t.Logf("authenticated %v after the 16 silent connections (busy %d)", time.Since(start), st.Busy)
	c.Close()
}
