//go:build adversary && linux

package perf

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cclab/transport"
)

// pathResponsePacket builds a PATH_RESPONSE (docs/wire.md "Path") to dcid.
func pathResponsePacket(dcid [8]byte, data uint64) []byte {
	b := append([]byte{2, 6}, dcid[:]...)
	return binary.BigEndian.AppendUint64(append(b, 2), data)
}

// TestAdversaryHijackPSK: the on-path hijack of a reverse flow through the
// relay (without a key the attacker, having sniffed the connection IDs,
// answered 6 path challenges, received 5.84 MB of a 60 MB flow and left
// the real client hung), now with a pre-shared key at both ends. From its
// own address, for the whole transfer, the attacker sends PINGs that would
// start a path validation, guessed path responses, CLOSEs, and the sniffed
// genuine packet itself: it must receive nothing, its packets must be
// counted as failing authentication or replayed, and the real client must
// finish verified.
func TestAdversaryHijackPSK(t *testing.T) {
	keys := mustKeys(t, hexKeyA)
	srv, flows := startServer(t, ServerConfig{AllowReverse: true, Keys: keys})
	r := startRelay(t, srv.Addr(), 20e6)
	seen := sniff(t, srv.Addr().Port())
	atk, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.9:0")))
	if err != nil {
		t.Fatal(err)
	}
	var got, sent, forged atomic.Int64
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		buf := make([]byte, 65536)
		for {
			n, err := atk.Read(buf)
			if err != nil {
				return
			}
			got.Add(int64(n))
		}
	}()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The first Short packet is the hello connection's (the
		// challenge, auth.go); the reverse flow's comes after it.
		var s sniffed
		select {
		case s = <-seen:
		case <-time.After(10 * time.Second):
			return
		}
		for hello := s.dcid; s.dcid == hello; {
			select {
			case s = <-sniff(t, srv.Addr().Port()):
			case <-time.After(10 * time.Second):
				return
			}
		}
		for i := uint64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, p := range [][]byte{shortPacket(s.dcid, 1<<40+i, 0, nil), pathResponsePacket(s.dcid, i), closePacket(s.dcid), s.pkt} {
				if _, err := atk.WriteToUDPAddrPort(p, srv.Addr()); err == nil {
					sent.Add(int64(len(p)))
					forged.Add(1)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := Run(context.Background(), ClientConfig{Addr: r.Addr().String(), Bytes: 16 << 20, Reverse: true, Keys: keys})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if forged.Load() == 0 {
		t.Fatal("scenario not exercised: no connection seen to attack")
	}
	if err != nil || !res.End.Verified {
		t.Fatalf("the real client under the hijack attempt: %v, want a verified transfer", err)
	}
	time.Sleep(200 * time.Millisecond) // anything still on its way to the attacker
	atk.Close()
	<-readerDone
	st := srv.EndpointStats()
	var flow *AuthResult
	for _, f := range waitFlows(t, srv, flows, 1) {
		if f.Reverse {
			flow = f.Auth
		}
	}
	if flow == nil || flow.AuthFailed == 0 || flow.Replayed == 0 {
		t.Fatalf("the reverse flow's account %+v: want its forged and replayed packets counted", flow)
	}
	t.Logf("hijack with a PSK: the attacker sent %d datagrams (%d bytes) naming the flow; it received %d bytes; the receiver dropped %d failing authentication and %d replayed (the flow's own: %d and %d); the client's 16 MiB reverse flow verified in %v (%.1f Mbit/s, %s)",
		forged.Load(), sent.Load(), got.Load(), st.Rejects[transport.RejectAuth], st.Rejects[transport.RejectReplay], flow.AuthFailed, flow.Replayed,
		took.Round(time.Millisecond), res.End.ThroughputBps/1e6, res.End.Auth.Cipher)
	if got.Load() != 0 {
		t.Errorf("the attacker received %d bytes, want none", got.Load())
	}
	if st.Rejects[transport.RejectAuth] == 0 || st.Rejects[transport.RejectReplay] == 0 {
		t.Errorf("rejects auth_failed %d replayed %d, want both counted", st.Rejects[transport.RejectAuth], st.Rejects[transport.RejectReplay])
	}
}
