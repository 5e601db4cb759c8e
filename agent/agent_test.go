package agent

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"cclab/internal/psk"
	"cclab/perf"
)

const (
	hexKeyA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexKeyB = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
)

func pskCreds(t *testing.T, s string) *Credentials {
	t.Helper()
	k, err := psk.ParseKeys([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return PSKCredentials(k)
}

// startAgent runs an agent on loopback until the test ends; tweaks change
// its unexported settings before it serves.
func startAgent(t testing.TB, cfg Config, tweaks ...func(*Server)) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	for _, f := range tweaks {
		f(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func dial(t *testing.T, s *Server, creds *Credentials) *Client {
	t.Helper()
	c, err := Dial(context.Background(), s.Addr().String(), creds)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// checkTransfer checks a finished transfer's result: verified, both
// summaries, a sane clock offset (one host: within the RTT bound of 0).
func checkTransfer(t *testing.T, res *TransferResult, wantBytes int64) {
	t.Helper()
	if res.Sender == nil {
		t.Fatal("no sender summary")
	}
	if !res.Sender.End.Verified {
		t.Errorf("sender: verified %v, want true (%s)", res.Sender.End.Verified, res.Sender.End.Error)
	}
	if wantBytes > 0 && res.Sender.End.Bytes != wantBytes {
		t.Errorf("sender: %d bytes, want %d", res.Sender.End.Bytes, wantBytes)
	}
	var recv perf.FlowSummary
	if err := json.Unmarshal(res.Receiver, &recv); err != nil {
		t.Fatalf("receiver summary %q: %v", res.Receiver, err)
	}
	if got, want := recv.Bytes, res.Sender.End.Bytes; got != want {
		t.Errorf("receiver: %d bytes, want the sender's %d", got, want)
	}
	if got, want := recv.Digest, res.Sender.End.SenderDigest; got != want {
		t.Errorf("receiver digest %s, want the sender's %s", got, want)
	}
	if recv.Error != "" {
		t.Errorf("receiver error %q", recv.Error)
	}
	// Both agents share this host's clock: the offset is 0 within its
	// bound (RTT/2) plus the clock readings' granularity.
	if res.OffsetRTT <= 0 || res.OffsetRTT > time.Second {
		t.Errorf("offset RTT %v, want in (0, 1s] on loopback", res.OffsetRTT)
	}
	if off := res.ClockOffset.Abs(); off > res.OffsetRTT/2+time.Millisecond {
		t.Errorf("clock offset %v on one host, want within RTT/2 = %v of 0", res.ClockOffset, res.OffsetRTT/2)
	}
}

func TestTransferPSK(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	a := startAgent(t, Config{Creds: creds})
	b := startAgent(t, Config{Creds: creds})
	send, recv := dial(t, a, creds), dial(t, b, creds)
	if got, want := send.Name(), "lab"; got != want {
		t.Errorf("agent name %q, want %q", got, want)
	}
	spec := TransferSpec{ID: "c/1/1", ReceiverHost: "127.0.0.1", CC: "reno", Recovery: "sack", Bytes: 2 << 20, Qlog: true}
	res, err := RunTransfer(context.Background(), send, recv, spec)
	if err != nil {
		t.Fatalf("RunTransfer: %v", err)
	}
	checkTransfer(t, res, 2<<20)
	if got, want := res.Sender.End.CC, "reno"; got != want {
		t.Errorf("cc %q, want %q", got, want)
	}
	for name, q := range map[string][]byte{"sender": res.SenderQlog, "receiver": res.ReceiverQlog} {
		if len(q) == 0 || !strings.Contains(string(q), "qlog_version") {
			t.Errorf("%s qlog: %d bytes, want a qlog trace", name, len(q))
		}
	}
	if got := a.Stats(); got.Sent != 1 || got.Authenticated != 1 {
		t.Errorf("sending agent stats %+v, want 1 sent, 1 authenticated", got)
	}
	if got := b.Stats(); got.Received != 1 {
		t.Errorf("receiving agent stats %+v, want 1 received", got)
	}
}

func TestTransferEd25519(t *testing.T) {
	pa, ka := newKey(t)
	pb, kb := newKey(t)
	ps, ks := newKey(t)
	agentCreds := func(k ed25519.PrivateKey) *Credentials {
		return Ed25519Credentials(k, map[string]ed25519.PublicKey{"scheduler": ps})
	}
	a := startAgent(t, Config{Creds: agentCreds(ka)})
	b := startAgent(t, Config{Creds: agentCreds(kb)})
	sched := Ed25519Credentials(ks, map[string]ed25519.PublicKey{"host-a": pa, "host-b": pb})
	send, recv := dial(t, a, sched), dial(t, b, sched)
	if got, want := send.Name()+","+recv.Name(), "host-a,host-b"; got != want {
		t.Errorf("agent names %q, want %q", got, want)
	}
	res, err := RunTransfer(context.Background(), send, recv, TransferSpec{ID: "ed", ReceiverHost: "127.0.0.1", CC: "cubic", Seconds: 1})
	if err != nil {
		t.Fatalf("RunTransfer: %v", err)
	}
	checkTransfer(t, res, 0)
	if res.SenderQlog != nil || res.ReceiverQlog != nil {
		t.Errorf("qlogs without Qlog: %d and %d bytes", len(res.SenderQlog), len(res.ReceiverQlog))
	}
}

func TestRefused(t *testing.T) {
	_, ka := newKey(t)
	ps, ks := newKey(t)
	_, kx := newKey(t)
	pa := ka.Public().(ed25519.PublicKey)
	agentCreds := &Credentials{keys: pskCreds(t, "lab "+hexKeyA).keys, identity: ka,
		authorized: []authorizedKey{{name: "scheduler", pub: ps}}}
	a := startAgent(t, Config{Creds: agentCreds})
	for _, tc := range []struct {
		name  string
		creds *Credentials
	}{
		{"wrong PSK", pskCreds(t, "lab "+hexKeyB)},
		{"unknown PSK name", pskCreds(t, "other "+hexKeyA)},
		{"unknown Ed25519 key", Ed25519Credentials(kx, map[string]ed25519.PublicKey{"a": pa})},
		{"agent not authorized by the client", Ed25519Credentials(ks, map[string]ed25519.PublicKey{"x": kx.Public().(ed25519.PublicKey)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), a.Addr().String(), tc.creds)
			if err == nil {
				c.Close()
				t.Fatal("Dial: got a connection, want ErrUnauthorized")
			}
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Dial: got %v, want ErrUnauthorized", err)
			}
		})
	}
	// The agent ends each handshake after the client has its answer.
	st := waitStats(t, a, func(st Stats) bool { return st.Unauthorized+st.HandshakeFailed == 4 })
	if got, want := st.Unauthorized, uint64(4); got != want {
		t.Errorf("unauthorized peers counted: got %d, want %d (%+v)", got, want, st)
	}
	if got := st.Authenticated; got != 0 {
		t.Errorf("authenticated: got %d, want 0", got)
	}
}

// waitStats waits until the agent's counters satisfy ok (the agent counts
// after the client has its answer) and returns them.
func waitStats(t *testing.T, s *Server, ok func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := s.Stats()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recorder is a net.Conn that keeps the frames written to it.
type recorder struct {
	net.Conn
	frames [][]byte
}

func (r *recorder) Write(b []byte) (int, error) {
	r.frames = append(r.frames, append([]byte(nil), b...))
	return r.Conn.Write(b)
}

// TestReplayedHandshake records a successful client's handshake and replays
// it on a new connection, PSK and Ed25519: the agent's fresh nonce makes the
// recorded proof worthless, and the replay is refused and counted.
func TestReplayedHandshake(t *testing.T) {
	for _, tc := range bothMethods(t) {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, Config{Creds: tc.agent})
			conn, cb := dialTLS(t, a.Addr().String())
			rec := &recorder{Conn: conn}
			if _, err := clientHandshake(rec, tc.client, cb); err != nil {
				t.Fatalf("the original handshake: %v", err)
			}
			conn.Close()
			if len(rec.frames) != 2 {
				t.Fatalf("recorded %d frames, want hello and auth", len(rec.frames))
			}
			replay, _ := dialTLS(t, a.Addr().String())
			replay.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := replay.Write(rec.frames[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := handshakeMessage(replay, tChallenge); err != nil {
				t.Fatalf("challenge to the replayed hello: %v", err)
			}
			if _, err := replay.Write(rec.frames[1]); err != nil {
				t.Fatal(err)
			}
			_, err := handshakeMessage(replay, tOK)
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("replayed auth: got %v, want ErrUnauthorized", err)
			}
			checkOneRefused(t, a)
		})
	}
}

// checkOneRefused waits until the agent has counted one authenticated and
// one unauthorized peer (it counts after the client has its answer) and
// checks that it did.
func checkOneRefused(t *testing.T, a *Server) {
	t.Helper()
	st := waitStats(t, a, func(st Stats) bool { return st.Unauthorized == 1 && st.Authenticated == 1 })
	if st.Unauthorized != 1 || st.Authenticated != 1 {
		t.Errorf("agent stats %+v: want 1 authenticated, 1 unauthorized", st)
	}
}

// methodCreds are an agent's and a client's matching credentials of one
// authentication method.
type methodCreds struct {
	name          string
	agent, client *Credentials
}

// bothMethods returns matching credentials for PSK and for Ed25519.
func bothMethods(t *testing.T) []methodCreds {
	ps, ks := newKey(t)
	pa, ka := newKey(t)
	return []methodCreds{
		{"psk", pskCreds(t, "lab "+hexKeyA), pskCreds(t, "lab "+hexKeyA)},
		{"ed25519", Ed25519Credentials(ka, map[string]ed25519.PublicKey{"s": ps}), Ed25519Credentials(ks, map[string]ed25519.PublicKey{"a": pa})},
	}
}

// TestRefusedMethod: a client whose method the agent has no credentials
// for is refused as unknown, both ways round.
func TestRefusedMethod(t *testing.T) {
	ps, ks := newKey(t)
	pa, ka := newKey(t)
	pskOnly := startAgent(t, Config{Creds: pskCreds(t, "lab "+hexKeyA)})
	edOnly := startAgent(t, Config{Creds: Ed25519Credentials(ka, map[string]ed25519.PublicKey{"s": ps})})
	for _, tc := range []struct {
		name  string
		agent *Server
		creds *Credentials
	}{
		{"Ed25519 client, PSK agent", pskOnly, Ed25519Credentials(ks, map[string]ed25519.PublicKey{"a": pa})},
		{"PSK client, Ed25519 agent", edOnly, pskCreds(t, "lab "+hexKeyA)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Dial(context.Background(), tc.agent.Addr().String(), tc.creds); !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Dial: got %v, want ErrUnauthorized", err)
			}
			if st := waitStats(t, tc.agent, func(st Stats) bool { return st.Unauthorized == 1 }); st.Unauthorized != 1 {
				t.Errorf("unauthorized: got %d, want 1", st.Unauthorized)
			}
		})
	}
	if _, err := Dial(context.Background(), pskOnly.Addr().String(), nil); err == nil {
		t.Error("Dial without credentials: no error")
	}
}
