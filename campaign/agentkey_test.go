package campaign

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"cclab/agent"
	"cclab/internal/agenttest"
)

// TestAgentKeyBinding: with Ed25519 credentials a host's agent must
// authenticate with the key the spec binds to the host (hosts[].key,
// default the host's name); an agent at a swapped address is refused as
// unauthorized with an error naming both keys, before any transfer.
func TestAgentKeyBinding(t *testing.T) {
	gen := func() (ed25519.PublicKey, ed25519.PrivateKey) {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return pub, priv
	}
	schedPub, schedPriv := gen()
	pubA, privA := gen()
	pubB, privB := gen()
	addrA := agenttest.Start(t, 1, agent.Ed25519Credentials(privA, map[string]ed25519.PublicKey{"scheduler": schedPub}))[0]
	addrB := agenttest.Start(t, 1, agent.Ed25519Credentials(privB, map[string]ed25519.PublicKey{"scheduler": schedPub}))[0]
	r := NewAgentRunner(agent.Ed25519Credentials(schedPriv, map[string]ed25519.PublicKey{"zurich": pubA, "boston": pubB}))
	defer r.Close()
	ctx := context.Background()
	cases := []struct {
		host Host
		want string // "" or a part of the error
	}{
		{Host{Name: "zurich", Agent: addrA}, ""},
		{Host{Name: "boston", Agent: addrB}, ""},
		{Host{Name: "zurich", Agent: addrB}, `authenticated with key "boston", but the spec binds host "zurich" to key "zurich"`},
		{Host{Name: "berlin", Key: "zurich", Agent: addrA}, ""},
		{Host{Name: "berlin", Agent: addrA}, `key "zurich", but the spec binds host "berlin" to key "berlin"`},
	}
	for _, c := range cases {
		_, err := r.client(ctx, c.host)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c.host, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one containing %q", c.host, err, c.want)
		case c.want != "":
			var f *Failure
			if !errors.As(err, &f) || f.Cause != CauseUnauthorized {
				t.Errorf("%+v: %v: want cause %s (not retried)", c.host, err, CauseUnauthorized)
			}
		}
	}
}

// TestAgentKeyBindingFirstDial: the check holds on a fresh connection too,
// which is then not kept.
func TestAgentKeyBindingFirstDial(t *testing.T) {
	schedPub, schedPriv, _ := ed25519.GenerateKey(rand.Reader)
	pubA, privA, _ := ed25519.GenerateKey(rand.Reader)
	addrA := agenttest.Start(t, 1, agent.Ed25519Credentials(privA, map[string]ed25519.PublicKey{"scheduler": schedPub}))[0]
	r := NewAgentRunner(agent.Ed25519Credentials(schedPriv, map[string]ed25519.PublicKey{"zurich": pubA}))
	defer r.Close()
	if _, err := r.client(context.Background(), Host{Name: "boston", Agent: addrA}); err == nil || !strings.Contains(err.Error(), `key "zurich", but the spec binds host "boston"`) {
		t.Errorf("swapped address on the first dial: %v", err)
	}
	if len(r.clients) != 0 {
		t.Errorf("the refused connection was kept: %v", r.clients)
	}
}

// TestSpecHostKey: hosts[].key parses, and KeyName defaults to the name.
func TestSpecHostKey(t *testing.T) {
	s, err := ParseSpec("k.yaml", []byte("name: k\nhosts:\n  - {name: a, agent: \"127.0.0.1:5310\", key: zurich-agent}\n  - {name: b, agent: \"127.0.0.2:5310\"}\n"+
		"variants: [{name: reno, cc: reno}]\ntransfer: {bytes: 1MB}\ncredentials: {psk: k}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Host("a").KeyName(); got != "zurich-agent" {
		t.Errorf("a's key: %q, want zurich-agent", got)
	}
	if got := s.Host("b").KeyName(); got != "b" {
		t.Errorf("b's key: %q, want its name", got)
	}
}
