package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/agent"
	"cclab/internal/agenttest"
)

// startAgents runs n agents on loopback with the PSK key file's key and
// returns their control addresses.
func startAgents(t *testing.T, n int, keyFile string) []string {
	t.Helper()
	creds, err := agent.LoadCredentials(keyFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return agenttest.Start(t, n, creds)
}

func writeKey(t *testing.T, dir, name, hex string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(hex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAgentRunner runs a campaign through real agents over loopback: three
// hosts, all pairs, two variants, 200 kB transfers; every transfer is done
// with the sender's measurements stored; a spec with another key is
// refused with cause unauthorized.
func TestAgentRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 12 transfers over loopback")
	}
	dir := t.TempDir()
	key := writeKey(t, dir, "campaign.psk", strings.Repeat("ab", 32))
	addrs := startAgents(t, 3, key)
	spec := func(keyFile string) *Spec {
		var b strings.Builder
		b.WriteString("name: loop\nhosts:\n")
		for i, a := range addrs {
			fmt.Fprintf(&b, "  - {name: h%d, agent: %q, data: 127.0.0.1, group: g%d}\n", i, a, i%2)
		}
		fmt.Fprintf(&b, "variants: [{name: reno, cc: reno, recovery: reno}, {name: sack, cc: reno, recovery: sack}]\n"+
			"transfer: {bytes: 200kB, qlog: true}\nschedule: {spacing: 0s, retries: 0, timeout: 60s}\ncredentials: {psk: %s}\n", keyFile)
		s, err := ParseSpec("loop.yaml", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s *Spec) (Counts, []Row) {
		creds, err := agent.LoadCredentials(s.Credentials.PSK, "", "")
		if err != nil {
			t.Fatal(err)
		}
		r := NewAgentRunner(creds)
		defer r.Close()
		st := openTestStore(t, sqliteDB(t))
		c, err := (&Scheduler{Spec: s, Store: st, Runner: r}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := st.Rows(context.Background(), s.Name, "")
		if err != nil {
			t.Fatal(err)
		}
		return c, rows
	}
	// On loopback the senders discover 65 KB datagrams (size discovery), so
	// the fewest packets 200,000 bytes can take is in the largest UDP payload.
	const maxUDPPayload = 65507 // bytes: 65535 − 8 (UDP) − 20 (IPv4)
	c, rows := run(spec(key))
	if c.Done != 12 {
		t.Errorf("done: got %d, want 12 (%+v)", c.Done, c)
	}
	for _, r := range rows {
		if r.Status != StatusDone {
			t.Errorf("%s: %s (%s: %s)", r.ID, r.Status, r.Cause, r.Error)
			continue
		}
		if r.Bytes != 200000 || r.GoodputBps <= 0 || r.MinRTTms <= 0 || r.PacketsSent < (200000+maxUDPPayload-1)/maxUDPPayload || r.SenderJSON == "" ||
			r.ReceiverJSON == "" || r.SenderQlog == "" || r.OffsetRTTms <= 0 {
			t.Errorf("%s: row %+v", r.ID, r)
		}
	}
	other := writeKey(t, dir, "other.psk", strings.Repeat("cd", 32))
	c, rows = run(spec(other))
	if c.Done != 0 || len(rows) != 12 {
		t.Fatalf("with another key: %+v, %d rows; want nothing done, 12 failures", c, len(rows))
	}
	for _, r := range rows {
		if r.Cause != CauseUnauthorized {
			t.Errorf("%s with another key: cause %s (%s), want %s", r.ID, r.Cause, r.Error, CauseUnauthorized)
		}
	}
}
