package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/internal/psk"
)

// dialTLS opens a TLS control connection to addr (closed when the test
// ends) and returns it with its channel binding.
func dialTLS(t *testing.T, addr string) (*tls.Conn, []byte) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(30 * time.Second))
	c := tls.Client(raw, clientTLS())
	t.Cleanup(func() { raw.Close() })
	if err := c.Handshake(); err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	cb, err := channelBinding(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, cb
}

// tcpProxy relays TCP connections to target and records what crosses it in
// each direction; tamper, when set, may change a chunk going to target
// before it is relayed.
type tcpProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	up     bytes.Buffer // client → target
	down   bytes.Buffer // target → client
	tamper func(b []byte)
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln}
	serveRelay(t, ln, func() (net.Conn, error) { return net.Dial("tcp", target) }, func(c, u net.Conn, wg *sync.WaitGroup) {
		go func() { defer wg.Done(); p.relay(u, c, &p.up, true) }()
		go func() { defer wg.Done(); p.relay(c, u, &p.down, false) }()
	})
	return p
}

// serveRelay accepts connections on ln until the test ends, dials the
// upstream for each and starts pipe's two goroutines (each calls wg.Done);
// the test's end closes the listener and every connection and waits for
// them.
func serveRelay(t *testing.T, ln net.Listener, dial func() (net.Conn, error), pipe func(c, u net.Conn, wg *sync.WaitGroup)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := dial()
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			wg.Add(2)
			pipe(c, u, &wg)
		}
	}()
}

// relay copies from src to dst, recording (and tampering with the upstream).
func (p *tcpProxy) relay(dst, src net.Conn, rec *bytes.Buffer, upstream bool) {
	defer dst.Close()
	b := make([]byte, 32<<10)
	for {
		n, err := src.Read(b)
		if n > 0 {
			p.mu.Lock()
			rec.Write(b[:n])
			if upstream && p.tamper != nil {
				p.tamper(b[:n])
			}
			p.mu.Unlock()
			if _, werr := dst.Write(b[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

// recorded returns both directions' bytes.
func (p *tcpProxy) recorded() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(append([]byte(nil), p.up.Bytes()...), p.down.Bytes()...)
}

// TestControlEncrypted: an on-path observer of both control connections of
// a transfer sees none of the requests' text: not the message types, the
// key's name, the spec's ID or controller, nor the transfer's admission
// token.
func TestControlEncrypted(t *testing.T) {
	creds := pskCreds(t, "labkey "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	b := startAgent(t, Config{Creds: creds})
	pa, pb := startProxy(t, a.Addr().String()), startProxy(t, b.Addr().String())
	send, err := Dial(context.Background(), pa.addr(), creds)
	if err != nil {
		t.Fatal(err)
	}
	defer send.Close()
	recv, err := Dial(context.Background(), pb.addr(), creds)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	spec := TransferSpec{ID: "campaign-secret/7/42", ReceiverHost: "127.0.0.1", CC: "cubic", Recovery: "sack", Bytes: 200_000}
	res, err := RunTransfer(context.Background(), send, recv, spec)
	if err != nil {
		t.Fatalf("RunTransfer through the observer: %v", err)
	}
	checkTransfer(t, res, 200_000)
	for name, rec := range map[string][]byte{"sending agent's": pa.recorded(), "receiving agent's": pb.recorded()} {
		if len(rec) < 1000 {
			t.Fatalf("%s connection: only %d bytes recorded", name, len(rec))
		}
		secrets := []string{`"type"`, "hello", "receive", "collect", "labkey", spec.ID, "cubic", "sack", "cclab agent v"}
		for _, s := range secrets {
			if bytes.Contains(rec, []byte(s)) {
				t.Errorf("%s connection: %q visible on the wire", name, s)
			}
		}
	}
}

// TestTamperedByte: one byte changed on the wire after authentication ends
// the connection (TLS record integrity); the tampered request is not run.
func TestTamperedByte(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	p := startProxy(t, a.Addr().String())
	c, err := Dial(context.Background(), p.addr(), creds)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Stats(context.Background()); err != nil {
		t.Fatalf("a request before tampering: %v", err)
	}
	p.mu.Lock()
	p.tamper = func(b []byte) {
		b[len(b)-1] ^= 0x01
		p.tamper = nil
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.Stats(ctx)
	if !errors.Is(err, ErrClosed) {
		t.Errorf("the tampered request: got %v, want ErrClosed (the agent drops the connection)", err)
	}
	if st := waitStats(t, a, func(st Stats) bool { return st.Conns == 0 }); st.Conns != 0 {
		t.Errorf("agent: %d connections open, want 0", st.Conns)
	}
}

// tlsListener listens on loopback with a TLS server certificate of its own
// (as an agent's), for a test's man in the middle.
func tlsListener(t *testing.T) net.Listener {
	t.Helper()
	cfg, err := serverTLS()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// tlsMITM terminates TLS towards the client with its own certificate, opens
// its own TLS session to the agent and relays the plain text between the
// two: every byte of the cclab handshake passes unchanged.
func tlsMITM(t *testing.T, agentAddr string) string {
	t.Helper()
	ln := tlsListener(t)
	serveRelay(t, ln, func() (net.Conn, error) { return tls.Dial("tcp", agentAddr, clientTLS()) }, func(c, u net.Conn, wg *sync.WaitGroup) {
		go func() { defer wg.Done(); io.Copy(u, c); u.Close() }()
		go func() { defer wg.Done(); io.Copy(c, u); c.Close() }()
	})
	return ln.Addr().String()
}

// TestMITMRefused: a man in the middle that relays the handshake across two
// TLS sessions is refused by the client (the agent's proof covers the other
// session's channel binding), PSK and Ed25519; the agent counts the refusal.
func TestMITMRefused(t *testing.T) {
	for _, tc := range bothMethods(t) {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, Config{Creds: tc.agent})
			if c, err := Dial(context.Background(), a.Addr().String(), tc.client); err != nil {
				t.Fatalf("direct Dial: %v", err)
			} else {
				c.Close()
			}
			c, err := Dial(context.Background(), tlsMITM(t, a.Addr().String()), tc.client)
			if err == nil {
				c.Close()
				t.Fatal("Dial through a TLS-terminating relay: authenticated, want ErrUnauthorized")
			}
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Dial through a TLS-terminating relay: got %v, want ErrUnauthorized", err)
			}
			checkOneRefused(t, a) // direct, relayed
		})
	}
}

// TestClientChecksBinding: the client refuses an agent proof made over
// another TLS session's channel binding before it sends its own proof: a
// man in the middle that relays hello and challenge between its two
// sessions and then answers ok itself, impersonating the agent, gets
// neither the client's proof nor an authenticated connection (PSK and
// Ed25519).
func TestClientChecksBinding(t *testing.T) {
	for _, tc := range bothMethods(t) {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, Config{Creds: tc.agent})
			ln := tlsListener(t)
			third := make(chan string, 1) // the type of the client's third frame
			go func() {
				defer close(third)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				u, err := tls.Dial("tcp", a.Addr().String(), clientTLS())
				if err != nil {
					return
				}
				defer u.Close()
				u.SetDeadline(time.Now().Add(30 * time.Second))
				relay := func(dst, src net.Conn) bool {
					b, err := readFrame(src, MaxRequest)
					if err != nil {
						return false
					}
					_, err = dst.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
					return err == nil
				}
				if !relay(u, c) || !relay(c, u) { // hello, challenge
					return
				}
				b, err := readFrame(c, MaxRequest)
				if err != nil {
					return
				}
				m, err := decodeMessage(b)
				if err != nil {
					return
				}
				third <- m.Type
				_ = writeFrame(c, &message{Type: tOK, Name: "forged"})
			}()
			t.Cleanup(func() { ln.Close() })
			c, err := Dial(context.Background(), ln.Addr().String(), tc.client)
			if err == nil {
				c.Close()
				t.Fatal("Dial: authenticated a man in the middle, want ErrUnauthorized")
			}
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Dial: got %v, want ErrUnauthorized", err)
			}
			if got := <-third; got == tAuth {
				t.Errorf("the client's third message: got %q (its proof, to a man in the middle), want none or an error", got)
			}
		})
	}
}

// TestAgentChecksBinding: the agent refuses a client proof made with the
// right key over another TLS session's channel binding (what a relaying man
// in the middle could at best obtain).
func TestAgentChecksBinding(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	key, _ := creds.keys.Key("lab")
	for _, tc := range []struct {
		name   string
		other  bool // the proof covers another session's binding
		wantOK bool
	}{{"this session", false, true}, {"another session", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			conn, cb := dialTLS(t, a.Addr().String())
			if tc.other {
				_, cb = dialTLS(t, a.Addr().String())
			}
			cn := psk.NewNonce()
			if err := writeFrame(conn, &message{Type: tHello, Method: methodPSK, Key: "lab", Nonce: hex.EncodeToString(cn)}); err != nil {
				t.Fatal(err)
			}
			ch, err := handshakeMessage(conn, tChallenge)
			if err != nil {
				t.Fatal(err)
			}
			an, _ := psk.DecodeNonce(ch.Nonce)
			if err := writeFrame(conn, &message{Type: tAuth, Proof: hex.EncodeToString(psk.MAC(key, labelClient, cb, cn, an))}); err != nil {
				t.Fatal(err)
			}
			_, err = handshakeMessage(conn, tOK)
			if got := err == nil; got != tc.wantOK {
				t.Errorf("authenticated %v (%v), want %v", got, err, tc.wantOK)
			}
			if !tc.wantOK && !errors.Is(err, ErrUnauthorized) {
				t.Errorf("got %v, want ErrUnauthorized", err)
			}
		})
	}
}

// TestReflectedProof: the agent refuses its own proof sent back as the
// client's (the two proofs' labels differ, and an Ed25519 client may not
// present the agent's key, even one the agent's authorized keys list).
func TestReflectedProof(t *testing.T) {
	pa, ka := newKey(t)
	for _, tc := range []struct {
		name   string
		creds  *Credentials
		method string
	}{
		{"psk", pskCreds(t, "lab "+hexKeyA), methodPSK},
		{"ed25519", Ed25519Credentials(ka, map[string]ed25519.PublicKey{"self": pa}), methodEd25519},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, Config{Creds: tc.creds})
			conn, _ := dialTLS(t, a.Addr().String())
			hello := &message{Type: tHello, Method: tc.method, Nonce: hex.EncodeToString(psk.NewNonce())}
			if tc.method == methodPSK {
				hello.Key = "lab"
			}
			if err := writeFrame(conn, hello); err != nil {
				t.Fatal(err)
			}
			ch, err := handshakeMessage(conn, tChallenge)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeFrame(conn, &message{Type: tAuth, Proof: ch.Proof, PubKey: ch.PubKey}); err != nil {
				t.Fatal(err)
			}
			if _, err := handshakeMessage(conn, tOK); !errors.Is(err, ErrUnauthorized) {
				t.Errorf("the agent's proof reflected: got %v, want ErrUnauthorized", err)
			}
		})
	}
}

// v1Frame encodes a control message of protocol version 1: plain text.
func v1Frame(v any) []byte {
	b, _ := json.Marshal(v)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// readPlain reads one plain-text frame.
func readPlain(t *testing.T, c net.Conn) plainMessage {
	t.Helper()
	b, err := readFrame(c, MaxRequest)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	var m plainMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return m
}

// TestV1ClientRefused: a scheduler of control protocol v1 (plain text) gets
// an answer it understands (a v1 unauthorized error naming v2), and the
// agent counts and logs it.
func TestV1ClientRefused(t *testing.T) {
	var logs []string
	var mu sync.Mutex
	a := startAgent(t, Config{Creds: pskCreds(t, "lab "+hexKeyA), Logf: func(f string, args ...any) {
		mu.Lock()
		logs = append(logs, f)
		mu.Unlock()
	}})
	c, err := net.Dial("tcp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	hello := map[string]any{"v": 1, "type": "hello", "method": "psk", "key": "lab", "nonce": hex.EncodeToString(psk.NewNonce())}
	if _, err := c.Write(v1Frame(hello)); err != nil {
		t.Fatal(err)
	}
	m := readPlain(t, c)
	if m.V != 1 || m.Type != tError || m.Code != codeUnauthorized || !strings.Contains(m.Error, "v2") {
		t.Errorf("answer to a v1 hello: %+v, want a v1 unauthorized error naming v2", m)
	}
	st := waitStats(t, a, func(st Stats) bool { return st.OldProtocol == 1 })
	if st.OldProtocol != 1 || st.Authenticated != 0 {
		t.Errorf("stats %+v: want 1 old-protocol refusal", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(logs, "\n"), "control protocol v1") {
		t.Errorf("log %q: no line about the v1 client", logs)
	}
}

// TestV1AgentRefused: a v2 client dialling an agent of control protocol v1
// (which reads the TLS ClientHello as a frame length over its bound and
// answers with a plain-text error) fails at once with ErrVersion.
func TestV1AgentRefused(t *testing.T) {
	addr := plainAgent(t, 1, func(n uint32) string {
		// The v1 agent's readFrame: "bad control message: length N, want 1..65536 bytes".
		return fmt.Sprintf("bad control message: length %d, want 1..65536 bytes", n)
	})
	_, err := Dial(context.Background(), addr, pskCreds(t, "lab "+hexKeyA))
	if !errors.Is(err, ErrVersion) || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("Dial to a v1 agent: got %v, want ErrVersion and ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), "v1") {
		t.Errorf("error %q does not name the agent's version", err)
	}
}

// TestPlainErrorClipped: the error text of a peer that answers in plain
// text (unauthenticated) reaches Dial's error cut to maxPlainError bytes and
// quoted, whatever its size and content, so that it can neither flood nor
// forge log lines (v1 and v2 plain frames).
func TestPlainErrorClipped(t *testing.T) {
	long := strings.Repeat("x", 60000) + "\nrefused 192.0.2.1: forged log line"
	for _, v := range []int{1, Version} {
		addr := plainAgent(t, v, func(uint32) string { return long })
		_, err := Dial(context.Background(), addr, pskCreds(t, "lab "+hexKeyA))
		if err == nil {
			t.Fatalf("v%d: Dial to a plain-text peer succeeded", v)
		}
		if got, want := len(err.Error()), maxPlainError+300; got > want {
			t.Errorf("v%d: error of %d bytes, want at most %d", v, got, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("v%d: error %q holds a raw newline from the peer", v, err)
		}
	}
}

// plainAgent listens on loopback and answers one connection's first frame
// header with a plain-text error frame of protocol version v whose error
// text is msg(the length the client's first 4 bytes announce), as a v1
// agent or a v2 agent refusing before TLS does.
func plainAgent(t *testing.T, v int, msg func(n uint32) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		c.Write(v1Frame(map[string]any{"v": v, "type": "error", "code": "bad", "error": msg(binary.BigEndian.Uint32(hdr[:]))}))
	}()
	return ln.Addr().String()
}

// BenchmarkDial measures one control connection's set-up on loopback: TCP,
// the TLS 1.3 handshake and the cclab PSK handshake bound to it.
//
//	go test ./agent -run '^$' -bench BenchmarkDial -benchtime 200x
func BenchmarkDial(b *testing.B) {
	k, err := psk.ParseKeys([]byte("lab " + hexKeyA))
	if err != nil {
		b.Fatal(err)
	}
	creds := PSKCredentials(k)
	s := startAgent(b, Config{Creds: creds, MaxConns: maxConnsBound, MaxHandshakes: maxConnsBound})
	for b.Loop() {
		c, err := Dial(context.Background(), s.Addr().String(), creds)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
