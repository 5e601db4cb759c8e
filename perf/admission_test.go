package perf

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"cclab/transport"
	"cclab/transport/udp"
)

// TestAdmissionMAC checks the MAC against its definition (HMAC-SHA-256 of
// label || connection ID || Initial DCID || test ID, first 16 bytes) and
// Verify against every field it covers.
func TestAdmissionMAC(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	const test, id, dcid = "00ff00ff00ff00ff00ff00ff00ff00ff", 0x0102030405060708, 0x1112131415161718
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cclab perf admission v1\x00"))
	m.Write(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, id), dcid))
	m.Write([]byte(test))
	want := m.Sum(nil)[:16]
	if got := AdmissionMAC(key, test, id, dcid); !hmac.Equal(got, want) {
		t.Fatalf("AdmissionMAC = %x, want %x", got, want)
	}
	good := Admission{ConnID: id, InitialDCID: dcid, Test: test, MAC: hex.EncodeToString(want)}
	for _, tc := range []struct {
		name string
		a    Admission
		key  []byte
		want bool
	}{
		{"as made", good, key, true},
		{"other connection ID", Admission{ConnID: id + 1, InitialDCID: dcid, Test: test, MAC: good.MAC}, key, false},
		{"other Initial DCID", Admission{ConnID: id, InitialDCID: dcid ^ 1, Test: test, MAC: good.MAC}, key, false},
		{"other test ID", Admission{ConnID: id, InitialDCID: dcid, Test: test[1:] + "0", MAC: good.MAC}, key, false},
		{"other key", good, []byte("another key of 32 bytes.........."), false},
		{"no MAC", Admission{ConnID: id, InitialDCID: dcid, Test: test}, key, false},
		{"not hex", Admission{ConnID: id, InitialDCID: dcid, Test: test, MAC: "zz"}, key, false},
	} {
		if got := tc.a.Verify(tc.key); got != tc.want {
			t.Errorf("%s: Verify = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAdmitKeyFlow: a client with an admission key is admitted by a server
// that checks the MAC of the flow's handshake; the same test ID with
// another key is refused before anything runs.
func TestAdmitKeyFlow(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	const test = "00ff00ff00ff00ff00ff00ff00ff00ff"
	// Admit runs on the server's per-connection goroutines, and the refusal
	// reaches the client through a socket, which the race detector does not
	// see as synchronisation: the slice needs its own lock.
	var (
		mu       sync.Mutex
		admitted []Admission
	)
	srv, _ := startServer(t, ServerConfig{Admit: func(a Admission) (bool, error) {
		mu.Lock()
		admitted = append(admitted, a)
		mu.Unlock()
		if !a.Verify(key) {
			return false, errors.New("wrong admission MAC")
		}
		return false, nil
	}, FlowKey: func(id string) []byte {
		if id == test {
			return key
		}
		return nil
	}})
	run := func(k []byte) error {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
		defer rcancel()
		_, err := Run(rctx, ClientConfig{Addr: srv.Addr().String(), Bytes: 10_000, Test: test, AdmitKey: k, Driver: udp.Config{}})
		return err
	}
	if err := run(key); err != nil {
		t.Fatalf("flow with the key: %v", err)
	}
	// Another key cannot authenticate the flow's data path (FlowKey): the
	// transport refuses it before Admit.
	if err := run([]byte("another key of 32 bytes..........")); !errors.Is(err, transport.ErrAuthRequired) {
		t.Errorf("flow with another key: %v, want transport.ErrAuthRequired", err)
	}
	mu.Lock()
	got := append([]Admission(nil), admitted...) // a copy: the lock is not held across the Run below
	mu.Unlock()
	if len(got) != 1 || got[0].Peer == (netip.AddrPort{}) {
		b, _ := json.Marshal(got)
		t.Errorf("admissions %s: want the one flow with the key, with its peer", b)
	}
	if _, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), AdmitKey: key}); err == nil {
		t.Error("an admission key without a test ID: no error")
	}
}
