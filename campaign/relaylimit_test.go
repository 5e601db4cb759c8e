package campaign

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cclab/relay"
)

// TestRelayLimits: a transfer is marked by the host-limited intervals of
// the links on its data's route and its ACKs' (Spec.Route), that
// intersect its time, with each code once; not by intervals elsewhere,
// before or after it, or below the thresholds.
func TestRelayLimits(t *testing.T) {
	sp := parseOverlapSpec(t)
	t0 := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	// zurich -> boston from t0+1s to t0+3s: data up zurich, groups
	// europe>america, down boston; ACKs up boston, groups america>europe,
	// down zurich.
	row := Row{From: "zurich", To: "boston", Start: t0.Add(time.Second), Seconds: 2}
	late := relay.HostLine{Writes: 100, Late: 5, RxQueueDrops: -1}     // 5 % over the limit
	fewLate := relay.HostLine{Writes: 100, Late: 2, RxQueueDrops: -1}  // under MinLate
	rareLate := relay.HostLine{Writes: 1000, Late: 9, RxQueueDrops: 0} // 0.9 %: under LateFraction
	drops := relay.HostLine{Writes: 100, RxQueueDrops: 3}
	iv := func(link string, from, to time.Duration, h relay.HostLine) RelayInterval {
		return RelayInterval{Link: link, Start: t0.Add(from), End: t0.Add(to), Host: h}
	}
	s := time.Second
	cases := []struct {
		name string
		ivs  []RelayInterval
		want []string
	}{
		{"none", nil, nil},
		{"sender's uplink late", []RelayInterval{iv("up zurich", 1*s, 2*s, late)}, []string{"relay late"}},
		{"ACK path late", []RelayInterval{iv("groups america>europe", 2*s, 3*s, late)}, []string{"relay late"}},
		{"kernel drops at the receiver's downlink", []RelayInterval{iv("down boston", 0, 1500*time.Millisecond, drops)}, []string{"relay rx_queue_drops"}},
		{"both codes, each once", []RelayInterval{iv("up zurich", 1*s, 2*s, late), iv("down boston", 2*s, 3*s, drops), iv("groups europe>america", 2*s, 3*s, late)},
			[]string{"relay late", "relay rx_queue_drops"}},
		{"another host's link", []RelayInterval{iv("up berlin", 1*s, 2*s, late), iv("down seattle", 1*s, 2*s, drops)}, nil},
		{"a relay the pair does not cross", []RelayInterval{iv("relay r", 1*s, 3*s, late)}, nil},
		{"before the transfer", []RelayInterval{iv("up zurich", 0, 1*s, late)}, nil},
		{"after the transfer", []RelayInterval{iv("up zurich", 3*s, 4*s, late)}, nil},
		{"under the thresholds", []RelayInterval{iv("up zurich", 1*s, 2*s, fewLate), iv("up zurich", 2*s, 3*s, rareLate)}, nil},
	}
	for _, c := range cases {
		rows := []Row{row}
		MarkRelayLimits(sp, rows, c.ivs)
		if got := rows[0].RelayLimits; !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	// A pair via a relay: the relay's intervals mark it.
	via := []Row{{From: "berlin", To: "seattle", Start: t0, Seconds: 2}}
	MarkRelayLimits(sp, via, []RelayInterval{iv("relay r", 1*s, 2*s, late)})
	if got, want := via[0].RelayLimits, []string{"relay late"}; !slices.Equal(got, want) {
		t.Errorf("via relay r: got %q, want %q", got, want)
	}
}

// TestRelayStatsStored: a relay's statistics lines decode into intervals
// of the links named, are stored once, and mark the stored transfers
// they overlap, which validate's exclusions count ("relay late 1").
func TestRelayStatsStored(t *testing.T) {
	sp := parseOverlapSpec(t)
	ctx := context.Background()
	st, err := OpenStore(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	// Two 1 s intervals: the first with late forward writes, the second
	// clean; an old relay's line without a host block.
	stats := `{"t":1,"interval":1,"hops":[],"flows":[],"counters":{},"host":[` +
		`{"dir":"fwd","wall_ns":` + ns(t0.Add(time.Second)) + `,"span_ns":1000000000,"writes":50,"late":10,"rx_queue_drops":-1},` +
		`{"dir":"rev","wall_ns":` + ns(t0.Add(time.Second)) + `,"span_ns":1000000000,"writes":50,"late":0,"rx_queue_drops":-1}]}
{"t":2,"interval":1,"hops":[],"flows":[],"counters":{},"host":[` +
		`{"dir":"fwd","wall_ns":` + ns(t0.Add(2*time.Second)) + `,"span_ns":1000000000,"writes":50,"late":0,"rx_queue_drops":0},` +
		`{"dir":"rev","wall_ns":` + ns(t0.Add(2*time.Second)) + `,"span_ns":1000000000,"writes":50,"late":0,"rx_queue_drops":0}]}
{"t":3,"interval":1,"hops":[],"flows":[],"counters":{}}
`
	ivs, skipped, err := DecodeRelayStats(strings.NewReader(stats), RelayLinks{Fwd: "up zurich", Rev: "down zurich"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 4 || skipped != 1 {
		t.Fatalf("decoded %d intervals, %d lines skipped; want 4, 1", len(ivs), skipped)
	}
	for round := range 2 {
		added, err := st.SaveRelayIntervals(ctx, sp.Name, ivs)
		if want := 4 * (1 - round); err != nil || added != want {
			t.Fatalf("saving the intervals, time %d: got %d added (%v), want %d", round+1, added, err, want)
		}
	}
	// zurich -> boston during the late interval, berlin -> boston during
	// it, zurich -> boston during the clean one.
	for i, r := range []Row{{From: "zurich", To: "boston", Start: t0.Add(200 * time.Millisecond), Seconds: 0.5},
		{From: "berlin", To: "boston", Start: t0.Add(200 * time.Millisecond), Seconds: 0.5},
		{From: "zurich", To: "boston", Start: t0.Add(1500 * time.Millisecond), Seconds: 0.3}} {
		r.Campaign, r.Digest, r.Seq, r.Attempt, r.Variant, r.Status = sp.Name, sp.Digest(), i+1, 1, "reno", StatusDone
		if err := st.Save(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := st.Transfers(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	var got []string
	for _, r := range rows {
		why := transferHostLimits(r)
		got = append(got, strings.Join(why, "+"))
		for _, w := range why {
			reasons[w]++
		}
	}
	if want := []string{"relay late", "", ""}; !slices.Equal(got, want) {
		t.Errorf("host limits of the stored transfers: got %q, want %q", got, want)
	}
	if got, want := exclusionText(reasons), "relay late 1"; got != want {
		t.Errorf("exclusions: got %q, want %q", got, want)
	}
	ps := Profiles(sp, rows)
	for _, p := range ps {
		if want := map[Pair]int{{"zurich", "boston"}: 1}[p.Pair]; p.HostLimited != want {
			t.Errorf("profile %s: %d host-limited, want %d", p.Pair, p.HostLimited, want)
		}
	}
}

// ns formats t as Unix ns.
func ns(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }
