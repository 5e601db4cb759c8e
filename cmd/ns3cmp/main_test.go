package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/backend/ns3"
)

// needNS3 skips a test with -short or without ns-3 (under CI=true a missing
// ns-3 fails it).
func needNS3(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs ns-3: skipped with -short")
	}
	if _, err := ns3.Build(context.Background()); err != nil {
		if errors.Is(err, ns3.ErrMissing) && os.Getenv("CI") != "true" {
			t.Skipf("ns-3 not available (%v); CI=true makes this a failure", err)
		}
		t.Fatal(err)
	}
}

// TestConformance runs a small grid on cclab's simulator and on ns-3 at
// matched settings (MatchedSettings, the ccperf path, 8 s, one seed) and
// fails when a goodput ratio leaves [0.9, 1.1] or the retransmissions
// differ by more than 1.5× (counted +1 on both sides, so that a handful at
// no loss does not decide). Without ns-3 it skips, and under CI=true fails.
func TestConformance(t *testing.T) {
	needNS3(t)
	path := Path{"16Mbit", "7.5ms", "droptail:20p"}
	cubic := Stack{"cubic", MatchedCubicCC, MatchedCubicPRR, ""}
	for _, tc := range []struct {
		st    Stack
		loss  string
		flows int
	}{
		{Stack{"newreno", MatchedNewRenoCC, MatchedNewReno, ""}, "0", 1},
		{Stack{"newreno", MatchedNewRenoCC, MatchedNewReno, ""}, "0.01", 1},
		{Stack{"newreno-prr", MatchedNewRenoCC, MatchedPRR, ""}, "0", 1},
		{Stack{"reno", MatchedLinuxRenoCC, MatchedLinuxRenoPRR, ""}, "0", 1},
		{cubic, "0", 1},
		// Four flows started at once: the start-up burst's losses, where
		// RFC 6937's SSRB (instead of ns-3's bound=ns3) fell into RTOs.
		{cubic, "0", 4},
	} {
		text, simText := Texts(path, tc.loss, tc.flows, tc.st, 8*time.Second, 0)
		sim, ref, _, _, err := Compare(context.Background(), text, simText, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := sim.Goodput / ref.Goodput
		rr := (sim.Retransmits + 1) / (ref.Retransmits + 1)
		t.Logf("%s ×%d loss %s: goodput sim %.2f ns3 %.2f Mbit/s (%.3f), retransmissions %.0f / %.0f",
			tc.st.Label, tc.flows, tc.loss, sim.Goodput/1e6, ref.Goodput/1e6, r, sim.Retransmits, ref.Retransmits)
		if r < 0.9 || r > 1.1 {
			t.Errorf("%s ×%d loss %s: goodput ratio sim/ns3 %.3f, want 0.9..1.1", tc.st.Label, tc.flows, tc.loss, r)
		}
		if rr < 1/1.5 || rr > 1.5 {
			t.Errorf("%s ×%d loss %s: retransmission ratio %.2f (%.0f / %.0f), want within 1.5x", tc.st.Label, tc.flows, tc.loss, rr, sim.Retransmits, ref.Retransmits)
		}
	}
}

// TestTrace runs one point with -trace and checks that both traces exist:
// cclab's qlog, and ns-3's event lines with every kind, the number of
// "state 3" lines (entries into recovery) equal to the series' count.
func TestTrace(t *testing.T) {
	needNS3(t)
	traceDir = t.TempDir()
	defer func() { traceDir = "" }()
	st := Stack{"newreno-prr", MatchedNewRenoCC, MatchedPRR, ""}
	text, _ := Texts(Path{"16Mbit", "7.5ms", "droptail:20p"}, "0.01", 1, st, 3*time.Second, 0)
	p, err := Point(text, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunSim(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	res, err := ns3.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunNS3(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(traceDir, "sim-1", "bulk.qlog")); err != nil || fi.Size() == 0 {
		t.Errorf("cclab qlog: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(traceDir, "ns3-1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("ns-3 trace line %q: want 4 fields", line)
		}
		kinds[f[2]]++
		if f[2] == "state" && f[3] == "3.000000" {
			kinds["recovery"]++
		}
	}
	for _, k := range []string{"cwnd", "ssthresh", "state", "rto", "retx", "ack"} {
		if kinds[k] == 0 {
			t.Errorf("ns-3 trace has no %q lines (%v)", k, kinds)
		}
	}
	for _, s := range res.Flows {
		if got, want := kinds["recovery"], int(s[len(s)-1].Recoveries); got != want {
			t.Errorf("recovery entries in the trace %d, want the series' %d", got, want)
		}
	}
}

// TestPointHandshake: -handshake auto runs cclab's handshake at TCP's sizes
// at points of several flows only (docs/compat.md "Handshake timing"), and
// the plan carries it to every flow; padded and tcp apply to every point.
func TestPointHandshake(t *testing.T) {
	defer func(h string) { Handshake = h }(Handshake)
	st := Stack{"cubic", MatchedCubicCC, MatchedCubicPRR, ""}
	for _, tc := range []struct {
		mode  string
		flows int
		want  bool
	}{
		{"auto", 1, false}, {"auto", 4, true},
		{"padded", 4, false}, {"tcp", 1, true},
	} {
		Handshake = tc.mode
		text, _ := Texts(Path{"16Mbit", "7.5ms", "droptail:20p"}, "0", tc.flows, st, time.Second, 0)
		p, err := Point(text, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Flows {
			if f.TCPHandshake != tc.want {
				t.Errorf("-handshake %s, %d flows: flow %s TCP handshake %v, want %v", tc.mode, tc.flows, f.Name, f.TCPHandshake, tc.want)
			}
		}
	}
}

// TestPointAckFirst: the matched settings have cclab's receiver
// acknowledge the first data segment at once, as ns-3's (ack_first), and
// the plan carries it to every flow; -ackfirst=false leaves it off. ns-3's
// program is the same either way (its receiver always does), so both share
// -ns3cache's entries.
func TestPointAckFirst(t *testing.T) {
	defer func(on bool) { MatchedSettings.AckFirst = on }(MatchedSettings.AckFirst)
	st := Stack{"cubic", MatchedCubicCC, MatchedCubicPRR, ""}
	var keys [][]byte
	for _, on := range []bool{true, false} {
		MatchedSettings.AckFirst = on
		text, _ := Texts(Path{"16Mbit", "7.5ms", "droptail:20p"}, "0", 2, st, time.Second, 0)
		p, err := Point(text, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Flows {
			if f.AckFirst != on {
				t.Errorf("-ackfirst=%v: flow %s AckFirst %v, want %v", on, f.Name, f.AckFirst, on)
			}
		}
		key, err := ns3.Export(p)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	if !bytes.Equal(keys[0], keys[1]) {
		t.Errorf("ns-3's program differs with ack_first on and off; want the same (ns-3's receiver always acknowledges the first segment at once)")
	}
}

// TestPairedLoss checks the -loss values -paired turns into hashed loss.
func TestPairedLoss(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0.01", "hashed:p=0.01"},
		{"0", "0"},
		{"bernoulli:p=0.02", "hashed:p=0.02"},
		{"ge:p=0.01,r=0.3", "ge:p=0.01,r=0.3"},
	} {
		if got := PairedLoss(tc.in); got != tc.want {
			t.Errorf("PairedLoss(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
