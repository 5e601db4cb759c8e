package agent

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cclab/perf"
	"cclab/transport"
	"cclab/transport/udp"
)

// TestAdmitMAC: the data port admits a flow only with the MAC of its own
// handshake under the announced transfer's key, once: a MAC read on the
// wire and put on another handshake (an attacker racing the real sender
// with its own connection IDs) is refused and claims nothing, the real flow
// is then admitted, and its replay is refused.
func TestAdmitMAC(t *testing.T) {
	s := startAgent(t, Config{Creds: pskCreds(t, "lab "+hexKeyA)})
	spec := TransferSpec{ID: "x", ReceiverHost: "127.0.0.1", Bytes: 1000}
	r := s.receive(&message{Type: tReceive, ID: 1, Spec: &spec}, "test")
	if r.Type != tReady {
		t.Fatalf("receive: %+v", r)
	}
	key, _ := hex.DecodeString(r.Token)
	id := flowID(key)
	const cid, dcid = 0x1111, 0x2222
	mac := hex.EncodeToString(perf.AdmissionMAC(key, id, cid, dcid))
	other := make([]byte, tokenBytes)
	peer := netip.MustParseAddrPort("192.0.2.1:4000")
	for _, tc := range []struct {
		name    string
		a       perf.Admission
		wantErr string // "" admitted
	}{
		{"no MAC", perf.Admission{ConnID: cid, InitialDCID: dcid, Peer: peer, Test: id}, "admission MAC"},
		{"captured MAC, attacker's connection ID", perf.Admission{ConnID: cid + 1, InitialDCID: dcid, Peer: peer, Test: id, MAC: mac}, "admission MAC"},
		{"captured MAC, attacker's Initial DCID", perf.Admission{ConnID: cid, InitialDCID: dcid + 1, Peer: peer, Test: id, MAC: mac}, "admission MAC"},
		{"MAC under another key", perf.Admission{ConnID: cid, InitialDCID: dcid, Peer: peer, Test: id, MAC: hex.EncodeToString(perf.AdmissionMAC(other, id, cid, dcid))}, "admission MAC"},
		{"unknown flow ID", perf.Admission{ConnID: cid, InitialDCID: dcid, Peer: peer, Test: flowID(other), MAC: mac}, "no such transfer"},
		{"the real flow", perf.Admission{ConnID: cid, InitialDCID: dcid, Peer: peer, Test: id, MAC: mac}, ""},
		{"the real flow replayed", perf.Admission{ConnID: cid, InitialDCID: dcid, Peer: peer, Test: id, MAC: mac}, "already arrived"},
		{"captured MAC on another handshake, after", perf.Admission{ConnID: cid + 1, InitialDCID: dcid + 1, Peer: peer, Test: id, MAC: mac}, "admission MAC"},
	} {
		_, err := s.admit(tc.a)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: refused (%v), want admitted", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v, want a refusal containing %q", tc.name, err, tc.wantErr)
		}
	}
	if got, want := s.Stats().NotAdmitted, uint64(7); got != want {
		t.Errorf("flows not admitted: got %d, want %d", got, want)
	}
}

// udpProxy relays one client's datagrams to a UDP server and back,
// recording what the client sent.
type udpProxy struct {
	pc   net.PacketConn
	mu   sync.Mutex
	sent [][]byte
	up   net.Conn // the upstream socket (the address the server sees)
}

func startUDPProxy(t *testing.T, server netip.AddrPort) *udpProxy {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.Dial("udp", server.String())
	if err != nil {
		t.Fatal(err)
	}
	p := &udpProxy{pc: pc, up: up}
	var client net.Addr
	var cmu sync.Mutex
	var wg sync.WaitGroup
	t.Cleanup(func() { pc.Close(); up.Close(); wg.Wait() })
	wg.Add(2)
	go func() {
		defer wg.Done()
		b := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			cmu.Lock()
			client = from
			cmu.Unlock()
			p.mu.Lock()
			p.sent = append(p.sent, append([]byte(nil), b[:n]...))
			p.mu.Unlock()
			up.Write(b[:n])
		}
	}()
	go func() {
		defer wg.Done()
		b := make([]byte, 65536)
		for {
			n, err := up.Read(b)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					continue
				}
				return
			}
			cmu.Lock()
			to := client
			cmu.Unlock()
			if to != nil {
				pc.WriteTo(b[:n], to)
			}
		}
	}()
	return p
}

func (p *udpProxy) addr() string { return p.pc.LocalAddr().String() }

func (p *udpProxy) datagrams() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.sent...)
}

// requestOf returns the perf request an Initial carries (the JSON object
// in it).
func requestOf(d []byte) (json.RawMessage, bool) {
	i := bytes.Index(d, []byte(`{"v":`))
	if i < 0 {
		return nil, false
	}
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(d[i:])).Decode(&raw); err != nil {
		return nil, false
	}
	return raw, true
}

// attack dials the data port from a socket of its own with request as the
// Initial's request (a new handshake: its own connection IDs) and returns
// the receiver's answer (its Report's error).
func attack(t *testing.T, to netip.AddrPort, request []byte) string {
	t.Helper()
	ep, err := udp.DialSocket(to.String(), udp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ep.Dial(ctx, to, transport.Config{Request: request})
	if errors.Is(err, transport.ErrAuthRequired) {
		return err.Error() // refused before the agent sees it: no key for the flow
	}
	if err != nil {
		t.Fatalf("attacker's handshake: %v", err)
	}
	c.CloseWrite()
	b, _ := io.ReadAll(c)
	var rep perf.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("attacker's answer %q: %v", b, err)
	}
	return rep.Error
}

// TestCapturedAdmission runs a transfer whose data flow crosses a recording
// proxy (an on-path observer of the data path): the admission key appears in
// no datagram, and while the transfer is still announced the captured
// request (flow ID and MAC) admits no other flow, nor does a verbatim replay
// of the captured datagrams from the real flow's address; the transfer's
// result is the real flow's.
func TestCapturedAdmission(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	b := startAgent(t, Config{Creds: creds})
	ca, cb := dial(t, a, creds), dial(t, b, creds)
	px := startUDPProxy(t, b.DataAddr())
	ctx := context.Background()
	spec := TransferSpec{ID: "x", ReceiverHost: "127.0.0.1", Bytes: 100_000}
	r, err := cb.call(ctx, &message{Type: tReceive, Spec: &spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.call(ctx, &message{Type: tSend, Spec: &spec, Token: r.Token, Addr: px.addr()}); err != nil {
		t.Fatalf("the real flow: %v", err)
	}
	key, _ := hex.DecodeString(r.Token)
	ds := px.datagrams()
	var req json.RawMessage
	for _, d := range ds {
		if bytes.Contains(d, key) || bytes.Contains(d, []byte(r.Token)) {
			t.Fatal("the admission key is visible on the data path")
		}
		if req == nil {
			req, _ = requestOf(d)
		}
	}
	var pr perf.Request
	if err := json.Unmarshal(req, &pr); err != nil || pr.Test != flowID(key) || len(pr.MAC) != 2*perf.AdmissionMACBytes {
		t.Fatalf("captured request %s (%v): want the flow ID and a MAC", req, err)
	}
	// The captured request on the attacker's own handshake.
	// Without the key the attacker's handshake cannot be authenticated:
	// the transport refuses it before the agent's MAC check.
	if msg := attack(t, b.DataAddr(), req); !strings.Contains(msg, "requires an authenticated connection") {
		t.Errorf("captured request on another handshake: receiver said %q, want a refusal for want of the key", msg)
	}
	// The captured datagrams replayed verbatim from the real flow's
	// address: the same handshake, already admitted once (the transport
	// drops them as a finished connection's, or the agent refuses it as
	// arrived), then the attacker's own handshake once more.
	for _, d := range ds[:min(len(ds), 4)] {
		px.up.Write(d)
	}
	if msg := attack(t, b.DataAddr(), req); !strings.Contains(msg, "requires an authenticated connection") {
		t.Errorf("captured request after the replay: receiver said %q, want a refusal for want of the key", msg)
	}
	// The transfer, still uncollected, kept the real flow's result.
	res, err := cb.call(ctx, &message{Type: tCollect, Token: r.Token})
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	var sum perf.FlowSummary
	if err := json.Unmarshal(res.Receiver, &sum); err != nil || sum.Bytes != spec.Bytes {
		t.Errorf("collected summary %s (%v): want the real flow's %d bytes", res.Receiver, err, spec.Bytes)
	}
	st := b.Stats()
	// The attacker's flows never reached the agent (refused by the
	// transport for want of the flow's key): none counts as not admitted.
	if st.Received != 1 || st.Failed != 0 || st.NotAdmitted != 0 {
		t.Errorf("receiving agent %+v: want 1 received, 0 failed, no flow reaching admission but the real one", st)
	}
}

// TestCrossCheck: RunTransfer's result must agree with the receiving
// agent's own summary (over TLS), not only with the receiver's report the
// sender read on the data path.
func TestCrossCheck(t *testing.T) {
	sender := &perf.Result{End: perf.End{SenderDigest: "ab12", SenderBytes: 1000}}
	for _, tc := range []struct {
		name     string
		sender   *perf.Result
		receiver string
		wantErr  bool
	}{
		{"match", sender, `{"bytes":1000,"digest":"ab12"}`, false},
		{"other digest", sender, `{"bytes":1000,"digest":"ab13"}`, true},
		{"other byte count", sender, `{"bytes":999,"digest":"ab12"}`, true},
		{"no receiver summary", sender, ``, true},
		{"no sender summary", nil, `{"bytes":1000,"digest":"ab12"}`, true},
	} {
		err := crossCheck(&TransferResult{Sender: tc.sender, Receiver: json.RawMessage(tc.receiver)})
		if got := err != nil; got != tc.wantErr || got && !errors.Is(err, ErrDataPath) {
			t.Errorf("%s: got %v, want error %v (ErrDataPath)", tc.name, err, tc.wantErr)
		}
	}
}
