package transport

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"cclab/ecn"
)

// TestAuthPLPMTUD: an authenticated stream connection, authenticated only
// (GMAC) or encrypted (GCM), discovers a path that carries 4000-byte
// datagrams as an unauthenticated one does: its probes and their
// acknowledgements are sealed (none opens as forged), the size lands within
// the search granularity below the path's, the data moves in datagrams of
// that size, and the probes lost on the way reach no congestion control.
func TestAuthPLPMTUD(t *testing.T) {
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypt=%v", encrypt), func(t *testing.T) {
			mtu := 4000
			n := newAnet(t, mtuPath(&mtu), EndpointConfig{PSK: keyring})
			largest := 0
			n.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
				if from == 0 && packetType(b[1]) == typeShort {
					largest = max(largest, len(b))
				}
				return true
			}
			cfg := Config{PSK: authKey, PSKName: "k1", Encrypt: encrypt, PLPMTUMax: 9000, MaxWindow: 50_000}
			cli, srv := n.transfer(cfg, 4<<20, time.Minute)
			if srv == nil || !cli.Done() || cli.Err() != nil || srv.Err() != nil {
				t.Fatalf("transfer did not complete: client err %v (%+v)", cli.Err(), cli.Stats().PLPMTU)
			}
			cs, ss := cli.Stats(), srv.Stats()
			if cs.SentDigest != ss.RecvDigest {
				t.Error("digests differ")
			}
			checkDiscovered(t, cs, mtu, largest)
			if cs.AuthFailed+ss.AuthFailed+cs.Replayed+ss.Replayed != 0 {
				t.Errorf("auth failures %d/%d, replays %d/%d on an honest path", cs.AuthFailed, ss.AuthFailed, cs.Replayed, ss.Replayed)
			}
		})
	}
}

// TestAuthPLPMTUDForged: on an authenticated connection discovering its
// size, an unauthenticated padded PMTU_PROBE to the server and a forged
// PMTU_ACK of the client's outstanding probe (plain, or with a packet
// number and a wrong tag) are dropped and counted as failing
// authentication: the server answers no probe, and the client's size moves
// only on the sealed acknowledgements.
func TestAuthPLPMTUDForged(t *testing.T) {
	mtu := 1400 // every probe is lost: only a forged ACK could raise the size
	n := newAnet(t, mtuPath(&mtu), EndpointConfig{PSK: keyring})
	acks := 0
	n.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
		if from == 1 && packetType(b[1]) == typePath {
			acks++
		}
		return true
	}
	cli, err := n.eps[0].Dial(n.now, n.addrs[1], Config{PSK: authKey, PSKName: "k1", PLPMTUMax: 9000, MaxWindow: 50_000})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), 1<<20)
	var srv *Conn
	buf := make([]byte, 64<<10)
	n.app = func(n *anet) { n.serve(&srv, buf) }
	if !n.run(10*time.Second, func() bool { return srv != nil && cli.pmtu.count > 0 }) {
		t.Fatal("no probe outstanding")
	}
	size, sentAcks := cli.Stats().PLPMTU.Size, acks
	d := make([]byte, 4000)
	encodePath(d, srv.localCID, pathPMTUProbe, 1) // a padded probe, unauthenticated
	n.eps[1].Receive(n.now, n.addrs[0], ecn.NotECT, d[:2000])
	k := encodePath(d, cli.localCID, pathPMTUAck, cli.pmtuN)
	n.eps[0].Receive(n.now, n.addrs[1], ecn.NotECT, append([]byte(nil), d[:k]...))
	copy(d[2+cidLen+1:], d[2+cidLen:k]) // packet number 0 of the Path space, a tag of zeros
	d[2+cidLen] = 0x3f
	n.eps[0].Receive(n.now, n.addrs[1], ecn.NotECT, append([]byte(nil), d[:k+1+TagLen]...))
	n.run(200*time.Millisecond, func() bool { return false })
	if got, want := srv.Stats().AuthFailed, uint64(1); got != want {
		t.Errorf("server AuthFailed = %d, want %d (the padded probe)", got, want)
	}
	if got, want := cli.Stats().AuthFailed, uint64(2); got != want {
		t.Errorf("client AuthFailed = %d, want %d (the forged acks)", got, want)
	}
	if acks != sentAcks {
		t.Errorf("the server sent %d Path packets after the forged probe, want none", acks-sentAcks)
	}
	if got := cli.Stats().PLPMTU.Size; got != size {
		t.Errorf("size %d after forged acks, want %d", got, size)
	}
}

// TestAuthRebind: the client of an authenticated connection moves to a new
// address (NAT rebinding): the server's sealed challenge is answered with
// a sealed response no larger than the challenge on the wire, and the
// connection moves there and completes.
func TestAuthRebind(t *testing.T) {
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring})
	moved := netip.MustParseAddrPort("10.0.0.9:4001")
	n.beforeTransmit = func(int) {
		if n.eps[1].Stats().BytesIn > 200_000 {
			n.addrs[0] = moved
		}
	}
	cli, srv := n.transfer(Config{PSK: authKey, PSKName: "k1"}, 1<<20, time.Minute)
	if srv == nil || !cli.Done() || !srv.Done() || cli.Err() != nil || srv.Err() != nil {
		t.Fatalf("transfer did not complete: client %v", cli.Err())
	}
	if got, want := srv.Peer(), moved; got != want || srv.Stats().Rebinds != 1 {
		t.Errorf("server peer %v (rebinds %d), want %v (1)", got, srv.Stats().Rebinds, want)
	}
}
