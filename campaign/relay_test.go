package campaign

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/agent"
	"cclab/relay"
)

// relaySpec is goodSpec with a relay in front of boston for two pairs.
var relaySpec = strings.Replace(goodSpec, "pairs: all", `relays:
  - name: atlantic
    listen: "10.0.9.1:9000"
    link: {rate: 10Mbit, delay: 40ms, queue: "droptail:100p", loss: "ge:p=0.01,r=0.3"}
pairs:
  - {from: zurich, to: boston, via: atlantic}
  - {from: paris, to: boston, via: atlantic}
  - {from: boston, to: zurich}`, 1)

// TestParseSpecRelays: a relay described once gives the pairs via it
// their relay, its command line with both directions shaped alike, and a
// path kind of its own.
func TestParseSpecRelays(t *testing.T) {
	s, err := ParseSpec("c.yaml", []byte(relaySpec))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := s.RelayOf(Pair{"zurich", "boston"})
	if !ok || r.Name != "atlantic" || r.To != "boston" || r.Link.Rate != 10e6 || r.Link.Delay != 40*time.Millisecond {
		t.Fatalf("zurich->boston relay: %+v, %v", r, ok)
	}
	if _, ok := s.RelayOf(Pair{"boston", "zurich"}); ok {
		t.Errorf("boston->zurich: a relay, want none")
	}
	if got, want := s.Target(r), "[2001:db8::3]:5311"; got != want {
		t.Errorf("target: got %q, want %q", got, want)
	}
	want := []string{"-listen", "10.0.9.1:9000", "-target", "[2001:db8::3]:5311",
		"-rate", "10Mbit", "-delay", "40ms", "-queue", "droptail:100p", "-loss", "ge:p=0.01,r=0.3",
		"-rev-rate", "10Mbit", "-rev-delay", "40ms", "-rev-queue", "droptail:100p", "-rev-loss", "ge:p=0.01,r=0.3"}
	if got := r.BottleneckArgs(s.Target(r)); !reflect.DeepEqual(got, want) {
		t.Errorf("bottleneck args:\n got %q\nwant %q", got, want)
	}
	cfg := r.Config(s.Target(r))
	if len(cfg.Hops[0]) != 1 || len(cfg.Hops[1]) != 1 || cfg.Hops[0][0] != r.Link || cfg.Hops[1][0] != r.Link {
		t.Errorf("relay config hops %+v, want the link both ways", cfg.Hops)
	}
	for p, want := range map[Pair]string{{"zurich", "boston"}: "inter+relay", {"boston", "zurich"}: "inter"} {
		if got := s.PathKind(p); got != want {
			t.Errorf("%s: kind %q, want %q", p, got, want)
		}
	}
	plain, err := ParseSpec("c.yaml", []byte(strings.Replace(relaySpec, ", via: atlantic}", "}", 2)))
	if err == nil {
		t.Fatalf("a relay no pair uses: no error (digest %s)", plain.Digest())
	}
}

// TestParseSpecRelayErrors: every error names the field.
func TestParseSpecRelayErrors(t *testing.T) {
	checkSpecErrors(t, relaySpec, []specErrorCase{
		{"unknown relay", "to: boston, via: atlantic}\n  - {from: paris", "to: boston, via: pacific}\n  - {from: paris", []string{"pairs[0].via", `unknown relay "pacific"`, "atlantic"}},
		{"two targets", "{from: boston, to: zurich}", "{from: boston, to: zurich, via: atlantic}", []string{"pairs[2].via", "forwards to boston", "one target"}},
		{"unused relay", ", via: atlantic}\n  - {from: paris, to: boston, via: atlantic}", "}\n  - {from: paris, to: boston}", []string{"relays[0]", "no pair goes via it"}},
		{"bad listen", `"10.0.9.1:9000"`, "relayhost", []string{"relays[0].listen", "host:port"}},
		{"no rate", "rate: 10Mbit, ", "", []string{"relays[0].link.rate", "missing required"}},
		{"bad rate", "rate: 10Mbit", "rate: fast", []string{"relays[0].link.rate", "fast"}},
		{"bad queue", `queue: "droptail:100p"`, "queue: lifo", []string{"relays[0].link.queue", "lifo"}},
		{"bad loss", `loss: "ge:p=0.01,r=0.3"`, "loss: lots", []string{"relays[0].link.loss", "lots"}},
		{"unknown link key", "delay: 40ms", "latency: 40ms", []string{"relays[0].link.latency", "allowed: delay, loss, queue, rate"}},
		{"no link", "\n    link: {rate: 10Mbit, delay: 40ms, queue: \"droptail:100p\", loss: \"ge:p=0.01,r=0.3\"}", "", []string{"relays[0]", `missing required field "link"`}},
	})
}

// TestDigestRelays: a spec without relays keeps its digest (the fields are
// left out), and a relay changes it.
func TestDigestRelays(t *testing.T) {
	a, err := ParseSpec("c.yaml", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.Digest(), "b7500751ce0a134e"; got != want {
		t.Errorf("digest without relays: got %s, want %s (the digest before relays existed)", got, want)
	}
	b, err := ParseSpec("c.yaml", []byte(relaySpec))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseSpec("c.yaml", []byte(strings.Replace(relaySpec, "delay: 40ms", "delay: 41ms", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest() == c.Digest() {
		t.Errorf("a relay's delay does not change the digest")
	}
}

// freeUDPPort returns a UDP port free on loopback a moment ago.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestTransfersViaRelay runs a campaign through real agents on loopback
// with one direction via a relay started from the spec's own description
// (Relay.Config): 20 ms each way, so the relayed path's round trip is at
// least 40 ms (both directions shaped) and the direct one's far below.
func TestTransfersViaRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 4 transfers over loopback")
	}
	dir := t.TempDir()
	key := writeKey(t, dir, "campaign.psk", strings.Repeat("ab", 32))
	creds, err := agent.LoadCredentials(key, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var ctl []string
	var data []int
	for i := 0; i < 2; i++ {
		port := freeUDPPort(t)
		s, err := agent.NewServer(agent.Config{Listen: "127.0.0.1:0", DataPort: port, Creds: creds})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		ctl, data = append(ctl, s.Addr().String()), append(data, port)
	}
	relayPort := freeUDPPort(t)
	src := fmt.Sprintf(`name: via
hosts:
  - {name: a, agent: %q, data: "127.0.0.1:%d", group: g}
  - {name: b, agent: %q, data: "127.0.0.1:%d", group: g}
relays:
  - {name: r, listen: "127.0.0.1:%d", link: {rate: 50Mbit, delay: 20ms, queue: "droptail:200p"}}
pairs: [{from: a, to: b, via: r}, {from: b, to: a}]
variants: [{name: reno, cc: reno, recovery: reno}]
transfer: {bytes: 200kB}
schedule: {rounds: 2, spacing: 0s, retries: 0, timeout: 60s}
credentials: {psk: %s}
`, ctl[0], data[0], ctl[1], data[1], relayPort, key)
	sp, err := ParseSpec("via.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := sp.RelayOf(Pair{"a", "b"})
	rl, err := relay.New(r.Config(sp.Target(r)))
	if err != nil {
		t.Fatal(err)
	}
	rl.Start()
	defer rl.Close()
	runner := NewAgentRunner(creds)
	defer runner.Close()
	st := openTestStore(t, sqliteDB(t))
	if _, err := (&Scheduler{Spec: sp, Store: st, Runner: runner}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows(context.Background(), sp.Name, sp.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, row := range rows {
		if row.Status != StatusDone {
			t.Fatalf("%s: %s (%s: %s)", row.ID, row.Status, row.Cause, row.Error)
		}
		relayed := row.From == "a"
		t.Logf("%s: min RTT %.2f ms, goodput %.3g Mbit/s", row.ID, row.MinRTTms, row.GoodputBps/1e6)
		if relayed && row.MinRTTms < 40 {
			t.Errorf("%s via the relay: min RTT %.2f ms, want at least 40 (20 ms each way: both directions shaped)", row.ID, row.MinRTTms)
		}
		if !relayed && row.MinRTTms >= 20 {
			t.Errorf("%s direct: min RTT %.2f ms, want below 20", row.ID, row.MinRTTms)
		}
	}
}
