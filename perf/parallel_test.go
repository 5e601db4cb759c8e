package perf

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"
)

// TestParallelFlows: -P 3 runs three verified flows whose sums are the
// flows' totals, with aligned intervals (per flow and summed, the last one
// partial), and the receiver reports the test once, with its three flows.
func TestParallelFlows(t *testing.T) {
	var mu sync.Mutex
	var tests []TestSummary
	srv, _ := startServer(t, ServerConfig{OnTest: func(s TestSummary) { mu.Lock(); tests = append(tests, s); mu.Unlock() }})
	var lines []int // flow index of each interval line, 0 = sum
	res, err := RunTest(context.Background(), TestConfig{
		Flow:     ClientConfig{Addr: srv.Addr().String(), Duration: 1300 * time.Millisecond, Interval: 500 * time.Millisecond},
		Parallel: 3,
		OnInterval: func(flow int, reverse bool, iv Interval) {
			lines = append(lines, flow)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flows) != 3 || res.Start.Flows != 3 || res.Start.Test == "" {
		t.Fatalf("got %d flows, start.flows %d, test %q; want 3, 3 and an ID", len(res.Flows), res.Start.Flows, res.Start.Test)
	}
	var bytes int64
	for i, f := range res.Flows {
		if !f.End.Verified || f.End.Bytes == 0 {
			t.Errorf("flow %d: verified %v bytes %d, want true and > 0", i+1, f.End.Verified, f.End.Bytes)
		}
		// Intervals are contiguous from 0, end on 0.5 s boundaries (a tick
		// may be late on a loaded machine, never early), and the last one
		// reaches the end of the transfer (≥ 1.3 s): the partial one is kept.
		var ivBytes int64
		prev := 0.0
		for k, iv := range f.Intervals {
			if iv.Start != prev || (k < len(f.Intervals)-1 && iv.End < 0.5*float64(k+1)) {
				t.Errorf("flow %d: interval %d spans %.3f-%.3f after one ending at %.3f: want contiguous, ending at or after %.1f s", i+1, k, iv.Start, iv.End, prev, 0.5*float64(k+1))
			}
			prev = iv.End
			ivBytes += iv.Bytes
		}
		if n := len(f.Intervals); n < 2 || prev < 1.3 || ivBytes != f.End.Bytes {
			t.Errorf("flow %d: %d intervals ending at %.3f s with %d bytes, want ≥ 2 reaching ≥ 1.3 s with the flow's %d bytes", i+1, n, prev, ivBytes, f.End.Bytes)
		}
		bytes += f.End.Bytes
	}
	if !res.End.Verified || res.End.Bytes != bytes {
		t.Errorf("sum: verified %v bytes %d, want true and %d (the flows' total)", res.End.Verified, res.End.Bytes, bytes)
	}
	var ivBytes int64
	for _, iv := range res.Intervals {
		ivBytes += iv.Bytes
	}
	if ivBytes != bytes {
		t.Errorf("summed intervals hold %d bytes, want %d", ivBytes, bytes)
	}
	sums, flowLines := 0, 0
	for _, f := range lines {
		if f == 0 {
			sums++
		}
	}
	for _, f := range res.Flows {
		flowLines += len(f.Intervals)
	}
	if sums != len(res.Intervals) || len(lines) != sums+flowLines || len(lines) > 0 && lines[len(lines)-1] != 0 {
		t.Errorf("interval callbacks %v: want every flow's intervals, each interval's followed by their sum (%d intervals)", lines, len(res.Intervals))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(tests)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tests) != 1 || tests[0].Flows != 3 || tests[0].Test != res.Start.Test || tests[0].ReceivedBytes != bytes {
		t.Errorf("receiver's test summaries %+v, want one for test %s with 3 flows and %d bytes", tests, res.Start.Test, bytes)
	}
}

// TestBidirAndOmit: --bidir runs one flow each way, both verified, the
// reverse one summed apart; -O leaves its first period out of the goodput
// and marks its intervals.
func TestBidirAndOmit(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{AllowReverse: true})
	res, err := RunTest(context.Background(), TestConfig{
		Flow: ClientConfig{Addr: srv.Addr().String(), Duration: 1200 * time.Millisecond, Interval: 200 * time.Millisecond,
			Omit: 400 * time.Millisecond},
		Parallel: 1, Bidir: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flows) != 2 || res.BidirReverse == nil || !res.Start.Bidir {
		t.Fatalf("got %d flows, bidir_reverse %v; want 2 and a reverse sum", len(res.Flows), res.BidirReverse != nil)
	}
	if res.Flows[0].End.Reverse || !res.Flows[1].End.Reverse || !res.BidirReverse.End.Reverse {
		t.Errorf("directions: flow 1 reverse %v, flow 2 %v, reverse sum %v; want false, true, true",
			res.Flows[0].End.Reverse, res.Flows[1].End.Reverse, res.BidirReverse.End.Reverse)
	}
	const omit = 0.4 // s, the -O above
	exercised := 0
	for i, f := range res.Flows {
		e := f.End
		if !e.Verified {
			t.Errorf("flow %d: not verified", i+1)
		}
		if len(f.Intervals) == 0 {
			t.Errorf("flow %d: no intervals", i+1)
			continue
		}
		// The omitted period counts from the test's origin, the flow's
		// Seconds from its own start; the last interval ends (origin-
		// relative) when the flow does. A flow that started after the
		// period ended (the reverse one's set-up can take that long on a
		// loaded machine) has nothing omitted.
		start := f.Intervals[len(f.Intervals)-1].End - e.Seconds
		wantOm := omit - start
		if wantOm < 0.05 {
			if e.OmittedSeconds > 0 && math.Abs(e.OmittedSeconds-wantOm) > 0.05 {
				t.Errorf("flow %d started %.3f s after the origin: omitted %.3f s, want 0 or %.3f", i+1, start, e.OmittedSeconds, wantOm)
			}
			continue
		}
		exercised++
		if e.OmittedSeconds <= 0 || math.Abs(e.OmittedSeconds-wantOm) > 0.05 || e.OmittedBytes <= 0 || e.OmittedBytes >= e.Bytes {
			t.Errorf("flow %d (started %.3f s after the origin): omitted %.3f s / %d of %d bytes; want %.3f s (the -O period left after its start) and some bytes",
				i+1, start, e.OmittedSeconds, e.OmittedBytes, e.Bytes, wantOm)
		}
		want := float64(e.Bytes-e.OmittedBytes) * 8 / (e.Seconds - e.OmittedSeconds)
		if d := e.ThroughputBps - want; d > 1 || d < -1 {
			t.Errorf("flow %d: throughput %.0f, want (bytes-omitted)*8/(seconds-omitted) = %.0f", i+1, e.ThroughputBps, want)
		}
		if len(f.Intervals) < 2 || !f.Intervals[0].Omitted || f.Intervals[len(f.Intervals)-1].Omitted {
			t.Errorf("flow %d: intervals %+v: want the first ones omitted, the last not", i+1, f.Intervals)
		}
	}
	if exercised == 0 {
		t.Skipf("both flows started %.1f s or more after the origin (a loaded host): the omitted period was not exercised", omit)
	}
}
