package transport

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"

	"cclab/clock"
)

// TestSealRequest: Dial hands SealRequest the connection's ID and its
// Initial's destination CID, the Initial carries what it returns, and the
// server's connection reports the same two IDs; a sealed request over
// MaxRequest fails Dial.
func TestSealRequest(t *testing.T) {
	peer := netip.MustParseAddrPort("198.51.100.7:5311")
	cli := NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(3, 3))})
	var gotID, gotDCID uint64
	seal := func(id, dcid uint64, req []byte) []byte {
		gotID, gotDCID = id, dcid
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(append([]byte(nil), req...), id), dcid)
	}
	c, err := cli.Dial(clock.Start, peer, Config{Request: []byte("req"), SealRequest: seal})
	if err != nil {
		t.Fatal(err)
	}
	if gotID != c.ID() || gotDCID != c.InitialDCID() || gotID == 0 {
		t.Errorf("SealRequest got IDs %x, %x; the connection's are %x, %x", gotID, gotDCID, c.ID(), c.InitialDCID())
	}
	buf := make([]byte, 2048)
	n, _, _ := cli.Transmit(clock.Start, buf)
	var p packet
	if r := decodePacket(buf[:n], &p); r != RejectNone || p.typ != typeInitial {
		t.Fatalf("first datagram: reject %v, type %v, want an Initial", r, p.typ)
	}
	want := seal(c.ID(), c.InitialDCID(), []byte("req"))
	if !bytes.Equal(p.request, want) {
		t.Errorf("Initial's request %x, want the sealed %x", p.request, want)
	}
	if p.scid != c.ID() || p.dcid != c.InitialDCID() {
		t.Errorf("Initial's CIDs %x, %x, want %x, %x", p.scid, p.dcid, c.ID(), c.InitialDCID())
	}
	// The server's connection names the same IDs (no Retry: NoRetry).
	srv := NewEndpoint(EndpointConfig{Server: true, NoRetry: true, Rand: rand.New(rand.NewPCG(4, 4))})
	srv.Receive(clock.Start, netip.MustParseAddrPort("192.0.2.1:40000"), 0, buf[:n])
	s := srv.Accept()
	if s == nil {
		t.Fatalf("no connection accepted: rejects %v", srv.Stats().Rejects)
	}
	if s.ID() != c.ID() || s.InitialDCID() != c.InitialDCID() || !bytes.Equal(s.Request(), want) {
		t.Errorf("server: IDs %x, %x, request %x; want %x, %x, %x", s.ID(), s.InitialDCID(), s.Request(), c.ID(), c.InitialDCID(), want)
	}
	long := func(uint64, uint64, []byte) []byte { return make([]byte, MaxRequest+1) }
	if _, err := cli.Dial(clock.Start, peer, Config{SealRequest: long}); err == nil {
		t.Errorf("Dial with a sealed request of %d bytes: no error", MaxRequest+1)
	}
}
