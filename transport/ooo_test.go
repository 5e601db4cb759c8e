package transport

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// TestOOOBudget: 16 connections each push 2 MB of out-of-order data (the
// first segment withheld) at an endpoint whose out-of-order budget is 4 MiB.
// Without the budget each holds its window (32 MiB in all); with it the
// endpoint holds at most the budget plus one segment, every connection
// keeps at least its share, and the excess is dropped and counted.
func TestOOOBudget(t *testing.T) {
	const budget = 4 << 20
	const conns = 16
	ep := NewEndpoint(EndpointConfig{Server: true, NoRetry: true, MaxOOOBytes: budget, Rand: rand.New(rand.NewPCG(5, 5))})
	now := clock.Start
	b := make([]byte, 2048)
	var cs []*Conn
	for i := 0; i < conns; i++ {
		from := netip.MustParseAddrPort(fmt.Sprintf("192.0.2.%d:1000", i+1))
		ep.Receive(now, from, ecn.NotECT, initialBytes(uint64(100+i), uint64(200+i), nil))
		c := ep.Accept()
		if c == nil {
			t.Fatalf("conn %d not accepted: %v", i, ep.Stats().Rejects)
		}
		drainAll(t, ep, now)
		ping := packet{typ: typeShort, dcid: c.localCID, flags: flagPING, ts: 1}
		ep.Receive(now, from, ecn.NotECT, b[:encodePacket(b, &ping)])
		cs = append(cs, c)
	}
	drainAll(t, ep, now)
	payload := make([]byte, testMSS)
	for k := 1; k*testMSS < 2<<20; k++ {
		for i, c := range cs {
			p := packet{typ: typeShort, dcid: c.localCID, flags: flagDATA, pn: uint64(k), ts: 2, off: uint64(k * testMSS), data: payload}
			ep.Receive(now, c.peer, ecn.NotECT, b[:encodePacket(b, &p)])
			if st := ep.Stats(); st.OOOBytes > budget+testMSS {
				t.Fatalf("after segment %d of conn %d: endpoint holds %d out-of-order bytes, budget %d", k, i, st.OOOBytes, budget)
			}
		}
		drainAll(t, ep, now)
	}
	st := ep.Stats()
	if st.OOOBytesDropped == 0 {
		t.Errorf("nothing dropped over the budget")
	}
	var sum uint64
	for i, c := range cs {
		span := c.rcvHigh - c.rcvNxt
		sum += c.Stats().OOOBytesDropped
		if span < budget/conns {
			t.Errorf("conn %d holds %d bytes, less than its share %d", i, span, budget/conns)
		}
	}
	if sum != st.OOOBytesDropped {
		t.Errorf("per-connection drops %d != endpoint drops %d", sum, st.OOOBytesDropped)
	}
	t.Logf("held %d out-of-order bytes (budget %d), dropped %d", st.OOOBytes, budget, st.OOOBytesDropped)
}

// TestOOOBudgetTransfer: a lossy transfer through an endpoint with a tiny
// out-of-order budget still completes intact (dropped data is
// retransmitted; nothing SACKed is ever dropped).
func TestOOOBudgetTransfer(t *testing.T) {
	h := newHarness(t, 61, impairedPath(0.05), impairedPath(0.05), Config{})
	h.eps[1].cfg.MaxOOOBytes = 8 * testMSS
	cli, srv, ok := h.transfer(1<<20, time.Hour)
	if !ok {
		t.Fatalf("transfer did not finish: %v", cli.Err())
	}
	checkTransfer(t, cli, srv, 1<<20, 0.05)
	if srv.Stats().OOOBytesDropped == 0 {
		t.Errorf("scenario not exercised: nothing dropped")
	}
}

// TestOOOBudgetManyConns: 4,096 connections each push 256 KiB out of order
// (the first segment withheld) at an endpoint with the default 64 MiB
// budget; the endpoint holds at most twice the budget (a connection may
// always grow to its share, budget / connections, and nothing SACKed is
// dropped) and the Go heap grows by about that much (printed; not asserted,
// the heap depends on the allocator).
func TestOOOBudgetManyConns(t *testing.T) {
	if testing.Short() {
		t.Skip("4,096 connections, about 900,000 datagrams: not in -short")
	}
	const conns, push = 4096, 256 << 10
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	ep, now := schedEndpoint(t, conns)
	b := make([]byte, 2048)
	payload := make([]byte, testMSS)
	buf := make([]byte, 65536)
	for k := 1; k*testMSS < push; k++ {
		for _, c := range ep.Conns() {
			p := packet{typ: typeShort, dcid: c.localCID, flags: flagDATA, pn: uint64(k + 1), ts: 2, off: uint64(k * testMSS), data: payload}
			ep.Receive(now, c.peer, ecn.NotECT, b[:encodePacket(b, &p)])
			for n, _, _ := ep.Transmit(now, buf); n > 0; n, _, _ = ep.Transmit(now, buf) {
			}
		}
	}
	st := ep.Stats()
	if st.OOOBytes > 2*DefaultMaxOOOBytes {
		t.Errorf("endpoint holds %d out-of-order bytes, budget %d", st.OOOBytes, DefaultMaxOOOBytes)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("%d conns x %d bytes out of order: held %d bytes (budget %d), dropped %d; heap in use %d MiB -> %d MiB",
		conns, push, st.OOOBytes, DefaultMaxOOOBytes, st.OOOBytesDropped, m0.HeapInuse>>20, m1.HeapInuse>>20)
	runtime.KeepAlive(ep)
}
