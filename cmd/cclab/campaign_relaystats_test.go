package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/campaign"
)

// relayStatsSpec has two groups and a relay in front of seattle.
const relayStatsSpec = `name: rs
hosts:
  - {name: zurich, agent: "10.0.0.1:5310", group: europe}
  - {name: boston, agent: "10.0.1.1:5310", group: america}
  - {name: seattle, agent: "10.0.1.2:5310", group: america}
relays:
  - {name: r, listen: "10.0.9.1:9000", link: {rate: 10Mbit, delay: 20ms}}
pairs:
  - {from: zurich, to: boston}
  - {from: zurich, to: seattle, via: r}
variants: [{name: reno, cc: reno, recovery: reno}]
transfer: {bytes: 100kB}
schedule: {rounds: 1, seed: 1, spacing: 0s}
credentials: {psk: k}
`

// TestCampaignRelayStats: cclab campaign relay-stats stores a relay's
// intervals under the links named (a relay's both directions by
// default), once, and refuses links on no route of the spec.
func TestCampaignRelayStats(t *testing.T) {
	dir := t.TempDir()
	spec, db, stats := filepath.Join(dir, "rs.yaml"), filepath.Join(dir, "rs.db"), filepath.Join(dir, "stats.jsonl")
	os.WriteFile(spec, []byte(relayStatsSpec), 0o644)
	end := time.Date(2026, 12, 7, 23, 0, 1, 0, time.UTC).UnixNano()
	line := fmt.Sprintf(`{"t":1,"interval":1,"hops":[],"flows":[],"counters":{},"host":[`+
		`{"dir":"fwd","wall_ns":%d,"span_ns":1000000000,"writes":100,"late":5,"rx_queue_drops":0},`+
		`{"dir":"rev","wall_ns":%d,"span_ns":1000000000,"writes":100,"late":0,"rx_queue_drops":2}]}`+"\n", end, end)
	os.WriteFile(stats, []byte(line), 0o644)
	cases := []struct {
		args []string
		code int
		want string // in stdout
	}{
		{[]string{"-stats", stats, "-fwd", "relay r"}, 0, "2 relay intervals read (2 host-limited), 2 new stored"},
		{[]string{"-stats", stats, "-fwd", "relay r"}, 0, "2 relay intervals read (2 host-limited), 0 new stored"},
		{[]string{"-stats", stats, "-fwd", "up zurich", "-rev", "down zurich"}, 0, "2 new stored"},
		{[]string{"-stats", stats, "-fwd", "groups europe>america"}, 0, "1 relay intervals read (1 host-limited), 1 new stored"},
		{[]string{"-stats", stats, "-fwd", "up paris"}, 2, ""},
		{[]string{"-stats", stats}, 2, ""},
		{[]string{"-fwd", "relay r"}, 2, ""},
		{[]string{"-stats", filepath.Join(dir, "missing.jsonl"), "-fwd", "relay r"}, 1, ""},
	}
	for _, c := range cases {
		args := append([]string{"relay-stats", spec, "-db", db}, c.args...)
		out, code := stdoutOf(t, func() int { return runCampaign(args) })
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("cclab campaign %q: exit %d, output %q; want exit %d and %q", args, code, out, c.code, c.want)
		}
	}
	st, err := campaign.OpenStore(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ivs, err := st.RelayIntervals(context.Background(), "rs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, iv := range ivs {
		got = append(got, iv.Link+" "+iv.Host.Dir)
	}
	if want := "down zurich rev, groups europe>america fwd, relay r fwd, relay r rev, up zurich fwd"; strings.Join(got, ", ") != want {
		t.Errorf("stored intervals: got %q, want %q", strings.Join(got, ", "), want)
	}
}
