package campaign

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	simrun "cclab/backend/sim"
	"cclab/eval"
	"cclab/scenario"
	"cclab/store"
)

// overlapSpec has two groups of hosts, explicit pairs inside and between
// them, and a relay in front of seattle.
const overlapSpec = `name: ov
hosts:
  - {name: zurich, agent: "10.0.0.1:5310", group: europe}
  - {name: berlin, agent: "10.0.0.2:5310", group: europe}
  - {name: paris, agent: "10.0.0.3:5310", group: europe}
  - {name: boston, agent: "10.0.1.1:5310", group: america}
  - {name: seattle, agent: "10.0.1.2:5310", group: america}
relays:
  - {name: r, listen: "10.0.9.1:9000", link: {rate: 10Mbit, delay: 20ms}}
pairs:
  - {from: zurich, to: boston}
  - {from: berlin, to: boston}
  - {from: boston, to: zurich}
  - {from: zurich, to: berlin}
  - {from: berlin, to: zurich}
  - {from: paris, to: berlin}
  - {from: zurich, to: paris}
  - {from: berlin, to: seattle, via: r}
  - {from: zurich, to: seattle, via: r}
variants: [{name: reno, cc: reno, recovery: reno}, {name: vegas, cc: vegas, recovery: newreno}]
transfer: {bytes: 1MB}
schedule: {rounds: 1, seed: 1, spacing: 0s}
credentials: {psk: k}
`

func parseOverlapSpec(t *testing.T) *Spec {
	t.Helper()
	sp, err := ParseSpec("ov.yaml", []byte(overlapSpec))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestCompetes: a transfer competes with another when its data cross a
// link that can be the other's bottleneck: the link between two groups in
// one direction, inside a group a host's access link in one direction, a
// relay; a wide-area transfer competes at the sender's access link with
// the transfers inside its group, not the other way round.
func TestCompetes(t *testing.T) {
	sp := parseOverlapSpec(t)
	cases := []struct {
		t, o Pair
		want bool
	}{
		{Pair{"zurich", "boston"}, Pair{"berlin", "boston"}, true},   // groups europe>america
		{Pair{"zurich", "boston"}, Pair{"boston", "zurich"}, false},  // opposite directions
		{Pair{"zurich", "boston"}, Pair{"zurich", "berlin"}, false},  // inside europe: not through the groups' link
		{Pair{"zurich", "berlin"}, Pair{"zurich", "boston"}, true},   // up zurich
		{Pair{"zurich", "berlin"}, Pair{"zurich", "paris"}, true},    // up zurich
		{Pair{"zurich", "berlin"}, Pair{"paris", "berlin"}, true},    // down berlin
		{Pair{"zurich", "berlin"}, Pair{"berlin", "zurich"}, false},  // each other's opposite access links
		{Pair{"berlin", "seattle"}, Pair{"zurich", "seattle"}, true}, // relay r
		{Pair{"berlin", "seattle"}, Pair{"berlin", "boston"}, false}, // the relay, not the groups' link
		{Pair{"berlin", "zurich"}, Pair{"berlin", "seattle"}, true},  // up berlin, then the relay
		{Pair{"zurich", "boston"}, Pair{"zurich", "seattle"}, false}, // the relay, not the groups' link
		{Pair{"zurich", "boston"}, Pair{"zurich", "boston"}, true},
	}
	for _, c := range cases {
		if got := sp.Competes(c.t, c.o); got != c.want {
			t.Errorf("Competes(%v, %v) = %v, want %v (bottlenecks %q, route %q)", c.t, c.o, got, c.want, sp.Bottlenecks(c.t), sp.Route(c.o))
		}
	}
}

// overlapTransfer is a synthetic done transfer: its pair, variant, start
// (from t0) and time.
type overlapTransfer struct {
	id             string
	from, to, v    string
	start, seconds float64
}

// overlapRows stores the transfers as the done rows of the spec's plan
// items of their pair and variant, each the first such item not yet
// taken (every other item pending), measured
// at goodput bps with min RTT minRTT; ids maps each transfer's id to its
// row's plan sequence number.
func overlapRows(sp *Spec, ts []overlapTransfer, bps, minRTTms float64) (rows []Row, ids map[string]int) {
	t0 := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	ids = map[string]int{}
	for _, it := range sp.Plan() {
		for _, tr := range ts {
			if _, taken := ids[tr.id]; taken || it.Pair != (Pair{tr.from, tr.to}) || it.Variant.Name != tr.v {
				continue
			}
			ids[tr.id] = it.Seq
			rows = append(rows, Row{Campaign: sp.Name, Digest: sp.Digest(), Seq: it.Seq, Attempt: 1, Round: it.Round, From: tr.from, To: tr.to,
				FromGroup: sp.Host(tr.from).Group, ToGroup: sp.Host(tr.to).Group, Variant: tr.v, CC: it.Variant.CC, Recovery: it.Variant.Recovery,
				Status: StatusDone, Start: t0.Add(time.Duration(tr.start * float64(time.Second))), Seconds: tr.seconds, Bytes: sp.Transfer.Bytes,
				GoodputBps: bps, MinRTTms: minRTTms, MeanSRTTms: minRTTms, PacketsSent: sp.Transfer.Bytes / 1200, Unnecessary: -1})
			break
		}
	}
	return rows, ids
}

// overlapTransfers: A and B overlap between the groups; C runs at the same
// time the other way; D follows A on its path and G starts when D ends
// (touching, not overlapping); E and F share zurich's access link up; H
// and I the relay; J has no start time.
var overlapTransfers = []overlapTransfer{
	{"A", "zurich", "boston", "reno", 0, 1},
	{"B", "berlin", "boston", "vegas", 0.5, 1},
	{"C", "boston", "zurich", "reno", 0.2, 0.6},
	{"D", "zurich", "boston", "vegas", 2, 1},
	{"G", "berlin", "boston", "reno", 3, 1},
	{"E", "zurich", "paris", "reno", 0, 0.5},
	{"F", "zurich", "berlin", "vegas", 0.4, 0.2},
	{"H", "berlin", "seattle", "reno", 5, 1},
	{"I", "zurich", "seattle", "reno", 5.9, 1},
}

// TestOverlaps: each done transfer with those that overlapped it in time
// and competed with it, and no other.
func TestOverlaps(t *testing.T) {
	sp := parseOverlapSpec(t)
	rows, ids := overlapRows(sp, overlapTransfers, 8e6, 100)
	name := map[int]string{}
	for id, seq := range ids {
		name[seq] = id
	}
	want := map[string]string{"A": "B", "B": "A", "C": "", "D": "", "G": "", "E": "A,F", "F": "A,E", "H": "I", "I": "H"}
	got := map[string]string{}
	for _, o := range Overlaps(sp, rows) {
		var with []string
		for _, w := range o.With {
			with = append(with, name[w.Seq])
		}
		slices.Sort(with)
		got[name[o.Row.Seq]] = strings.Join(with, ",")
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("transfer %s overlapped by %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d transfers, want %d", len(got), len(want))
	}
	// Without a start time nothing overlaps.
	for i := range rows {
		rows[i].Start = time.Time{}
	}
	for _, o := range Overlaps(sp, rows) {
		if len(o.With) > 0 {
			t.Errorf("transfer %s without a start time overlapped by %d, want 0", name[o.Row.Seq], len(o.With))
		}
	}
}

// TestOverlapExperiment: each measured transfer is a case of its own on
// its path, the overlapping transfers replayed with it as flows of their
// own variants at their offsets from the earliest start, the others alone;
// a cell's transfers get distinct seeds, at least ValidateSeeds in all.
func TestOverlapExperiment(t *testing.T) {
	sp := parseOverlapSpec(t)
	rows, ids := overlapRows(sp, overlapTransfers, 8e6, 100)
	for i, r := range rows {
		if r.FromGroup == r.ToGroup {
			rows[i].MinRTTms = 10
		}
	}
	profiles := Profiles(sp, rows)
	exp, err := OverlapExperiment(sp, profiles, rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(exp.Points), len(overlapTransfers); got != want {
		t.Fatalf("points: got %d, want %d (one per transfer)", got, want)
	}
	type flow struct {
		name, cc   string
		start, rtt time.Duration
	}
	want := map[string][]flow{
		"A": {{"reno", "reno", 0, 0}, {"with1-vegas", "vegas", 500 * time.Millisecond, 0}},
		"B": {{"vegas", "vegas", 500 * time.Millisecond, 0}, {"with1-reno", "reno", 0, 0}},
		"C": {{"reno", "reno", 0, 0}},
		// A, from zurich to boston, at zurich's access link with its
		// own round trip.
		"E": {{"reno", "reno", 0, 0}, {"with1-reno", "reno", 0, 100 * time.Millisecond}, {"with2-vegas", "vegas", 400 * time.Millisecond, 0}},
		"I": {{"reno", "reno", 900 * time.Millisecond, 0}, {"with1-reno", "reno", 0, 0}},
	}
	byCase := map[string]scenario.Point{}
	for _, p := range exp.Points {
		for _, pr := range p.Params {
			if pr.Axis == scenario.CaseAxis {
				byCase[pr.Value] = p
			}
		}
	}
	var seeds []uint64
	for _, tr := range overlapTransfers {
		p, ok := byCase[replayCaseName(tr.v, ids[tr.id])]
		if !ok {
			t.Errorf("transfer %s: no case %s", tr.id, replayCaseName(tr.v, ids[tr.id]))
			continue
		}
		sc := p.Scenario
		if got, want := len(sc.Seeds), ValidateSeeds; got != want { // one transfer per cell
			t.Errorf("transfer %s: %d seeds, want %d", tr.id, got, want)
		}
		if tr.id == "A" {
			seeds = sc.Seeds
		}
		w, ok := want[tr.id]
		if !ok {
			continue
		}
		var got []flow
		for _, f := range sc.Flows {
			got = append(got, flow{f.Name, f.CC, f.Start, f.RTT})
		}
		if !slices.Equal(got, w) {
			t.Errorf("transfer %s: flows %v, want %v", tr.id, got, w)
		}
	}
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(seeds, want) {
		t.Errorf("transfer A's seeds %v, want %v", seeds, want)
	}
	// With the live backend no flow has a round trip of its own (the
	// relay has one access delay), on either backend.
	lexp, err := OverlapExperiment(sp, profiles, rows, []string{scenario.BackendSim, scenario.BackendLive})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lexp.Points {
		for _, f := range p.Scenario.Flows {
			if f.RTT != 0 {
				t.Errorf("with the live backend: case %s flow %s has rtt %v, want none", p.Params[0].Value, f.Name, f.RTT)
			}
		}
	}
	// Timed transfers: each flow stops the campaign's duration after its
	// start.
	timed, err := ParseSpec("ov.yaml", []byte(strings.Replace(overlapSpec, "transfer: {bytes: 1MB}", "transfer: {duration: 2s}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	trows, tids := overlapRows(timed, overlapTransfers, 8e6, 100)
	texp, err := OverlapExperiment(timed, Profiles(timed, trows), trows, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range texp.Points {
		if p.Params[0].Value != replayCaseName("vegas", tids["B"]) {
			continue
		}
		found = true
		var got [][2]time.Duration
		for _, f := range p.Scenario.Flows {
			got = append(got, [2]time.Duration{f.Start, f.Stop})
		}
		if want := [][2]time.Duration{{500 * time.Millisecond, 2500 * time.Millisecond}, {0, 2 * time.Second}}; !slices.Equal(got, want) {
			t.Errorf("timed transfer B: flows' start and stop %v, want %v", got, want)
		}
		if got, want := p.Scenario.Duration, 2500*time.Millisecond; got != want {
			t.Errorf("timed transfer B: duration %v, want %v", got, want)
		}
	}
	if !found {
		t.Errorf("timed: no case %s", replayCaseName("vegas", tids["B"]))
	}
}

// TestOverlapCaseSeeds: the transfers of one cell get distinct seeds,
// ceil(ValidateSeeds / n) each.
func TestOverlapCaseSeeds(t *testing.T) {
	sp := testSpec(t, 2, 1, 3, "")
	var ts []overlapTransfer
	for i := range 3 {
		ts = append(ts, overlapTransfer{string(rune('a' + i)), "h1", "h2", "v0", float64(10 * i), 1})
	}
	rows, _ := overlapRows(sp, ts, 8e6, 100)
	cs := overlapCases(sp, Profiles(sp, rows), rows)
	var got [][]uint64
	for _, c := range cs {
		got = append(got, c.seeds)
	}
	want := [][]uint64{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("seeds per transfer: got %v, want %v", got, want)
	}
}

// TestValidateOverlapReplayedTogether: two 1 MB transfers that ran at once
// through one 10 Mbit/s link between the groups are replayed together,
// and their replayed goodput falls below the replay of their path alone
// (-alone), which is what the measurement was compared with before; a
// transfer that ran alone replays the same either way.
func TestValidateOverlapReplayedTogether(t *testing.T) {
	sp := parseOverlapSpec(t)
	ts := []overlapTransfer{
		{"A", "zurich", "boston", "reno", 0, 1.6},
		{"B", "berlin", "boston", "reno", 0, 1.6},
		{"C", "boston", "zurich", "reno", 0, 0.8},
	}
	rows, _ := overlapRows(sp, ts, 10e6, 100)
	st, err := store.Open(filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	goodput := map[bool]map[Pair]Comparison{}
	for _, alone := range []bool{true, false} {
		cs, _, err := Validate(ctx, sp, rows, ValidateOptions{Store: st, Runners: map[string]eval.Runner{scenario.BackendSim: simrun.Runner{}}, Alone: alone})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(cs), 3; got != want {
			t.Fatalf("alone %v: %d comparisons, want %d", alone, got, want)
		}
		goodput[alone] = map[Pair]Comparison{}
		for _, c := range cs {
			goodput[alone][c.Pair] = c
			if c.Overlaps == alone {
				t.Errorf("alone %v: %s Overlaps = %v", alone, c.Pair, c.Overlaps)
			}
		}
		text := ReplayText(cs)
		if strings.Contains(text, "alone,") != alone {
			t.Errorf("alone %v: ReplayText %q", alone, text)
		}
		var html strings.Builder
		if err := WriteReport(&html, sp, "v.db", rows, cs); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(html.String(), strings.ReplaceAll(text, "'", "&#39;")) {
			t.Errorf("alone %v: the report's replay table does not say %q", alone, text)
		}
	}
	for _, c := range []struct {
		pair       Pair
		overlapped int
		lo, hi     float64 // replayed together / alone
	}{
		// Mostly slow start at 100 ms: sharing the link costs 9 %
		// (3.2 against 3.52 Mbit/s).
		{Pair{"zurich", "boston"}, 1, 0, 0.95},
		{Pair{"berlin", "boston"}, 1, 0, 0.95},
		{Pair{"boston", "zurich"}, 0, 0.999, 1.001},
	} {
		o, a := goodput[false][c.pair], goodput[true][c.pair]
		r := o.Goodput.Predicted.Mean / a.Goodput.Predicted.Mean
		t.Logf("%s: replayed together %.3g Mbit/s, alone %.3g Mbit/s: %.3f", c.pair, o.Goodput.Predicted.Mean/1e6, a.Goodput.Predicted.Mean/1e6, r)
		if r < c.lo || r > c.hi {
			t.Errorf("%s: replayed goodput with the overlapping transfer / alone = %.3f, want in [%.3f, %.3f]", c.pair, r, c.lo, c.hi)
		}
		if o.Overlapped != c.overlapped {
			t.Errorf("%s: Overlapped %d, want %d", c.pair, o.Overlapped, c.overlapped)
		}
	}
}

// TestReplayCaseYAML: a case's flows in the replay scenario, sized and
// timed, with and without a round trip of their own; the run lasts the
// transfer's bound after the last start.
func TestReplayCaseYAML(t *testing.T) {
	v := Variant{Name: "reno", CC: "reno", Recovery: "reno"}
	c := replayCase{name: "reno#3", path: "inter-a-b", seeds: []uint64{1, 2}, flows: []overlapFlow{
		{name: "reno", variant: v, start: 250 * time.Millisecond},
		{name: "with1-reno", variant: v, rtt: 100 * time.Millisecond},
	}}
	cases := []struct {
		name  string
		timed bool
		want  string
	}{
		{"sized", false, `  - name: "reno#3"
    topology: "inter-a-b"
    seeds: [1, 2]
    duration: 10.25s
    flows:
      - {name: "reno", cc: "reno", recovery: "reno", traffic: "greedy:bytes=100000", pmtud: true, start: 250ms}
      - {name: "with1-reno", cc: "reno", recovery: "reno", traffic: "greedy:bytes=100000", pmtud: true, start: 0s, rtt: 100ms}
`},
		{"timed", true, `  - name: "reno#3"
    topology: "inter-a-b"
    seeds: [1, 2]
    duration: 10.25s
    flows:
      - {name: "reno", cc: "reno", recovery: "reno", traffic: "greedy:bytes=100000", pmtud: true, start: 250ms, stop: 10.25s}
      - {name: "with1-reno", cc: "reno", recovery: "reno", traffic: "greedy:bytes=100000", pmtud: true, start: 0s, stop: 10s, rtt: 100ms}
`},
	}
	for _, tc := range cases {
		var b strings.Builder
		c.writeCase(&b, 10*time.Second, "greedy:bytes=100000", ", pmtud: true", tc.timed)
		if got := b.String(); got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}
