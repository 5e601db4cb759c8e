package perf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"cclab/internal/hostlimit"
)

// TestConfig describes a sender run of several flows at once (iperf3's -P
// and --bidir): Parallel flows in the direction of Flow.Reverse, and with
// Bidir as many again in the other direction, all started together.
type TestConfig struct {
	Flow     ClientConfig // each flow's settings (its OnInterval, Start, Test and Flows are set here)
	Parallel int          // flows per direction (-P), ≥ 1
	Bidir    bool         // also as many flows in the other direction (--bidir)
	// OnInterval, if set, is called for each interval once every flow
	// still running has finished it: flow is the 1-based index in
	// Result.Flows, or 0 for a direction's sum; reverse tells the direction.
	// Calls never overlap (they are made under one lock), and all are made
	// before RunTest returns.
	OnInterval func(flow int, reverse bool, iv Interval)
}

// RunTest runs the flows of a test and returns the Result with per-flow
// results in Flows and the sums per direction; with one flow it is Run.
func RunTest(ctx context.Context, tc TestConfig) (*Result, error) {
	if tc.Parallel < 1 || tc.Parallel*2 > MaxFlows {
		return nil, fmt.Errorf("-P %d: must be between 1 and %d", tc.Parallel, MaxFlows/2)
	}
	if err := tc.Flow.Validate(); err != nil {
		return nil, err
	}
	n := tc.Parallel
	if tc.Bidir {
		n *= 2
	}
	if n == 1 {
		cfg := tc.Flow
		if tc.OnInterval != nil {
			cfg.OnInterval = func(iv Interval) { tc.OnInterval(0, cfg.Reverse, iv) }
		}
		return Run(ctx, cfg)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	test := hex.EncodeToString(id[:])
	agg := newIntervalAgg(n, tc)
	t0 := time.Now()
	results := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cfg := tc.Flow
		cfg.Reverse = tc.Flow.Reverse != (i >= tc.Parallel) // the bidir half runs the other way
		cfg.Seed = tc.Flow.Seed + uint64(i)                 // a distinct stream per flow
		cfg.Start, cfg.Test, cfg.Flows = t0, test, n
		cfg.OnInterval = func(iv Interval) { agg.add(i, iv) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer agg.done(i)
			results[i], errs[i] = Run(ctx, cfg)
		}()
	}
	wg.Wait()
	res := &Result{Flows: results}
	var failed []error
	for i, r := range results {
		if errs[i] != nil {
			failed = append(failed, fmt.Errorf("flow %d: %w", i+1, errs[i]))
		}
		if r == nil {
			// It failed before starting: a stand-in keeps Flows aligned.
			results[i] = &Result{Intervals: []Interval{}, End: End{Error: errs[i].Error()}}
		}
	}
	first := results[0].Start
	res.Start = first
	res.Start.ConnID = ""
	res.Start.Reverse = tc.Flow.Reverse
	res.Start.Test, res.Start.Flows, res.Start.Bidir = test, n, tc.Bidir
	res.Start.Seed = tc.Flow.Seed
	res.Intervals, res.End = sumFlows(results[:tc.Parallel])
	hosts := make([]*hostlimit.Report, len(results))
	for i, r := range results {
		hosts[i] = r.End.Host
	}
	res.End.Host = mergeHost(hosts)
	if tc.Bidir {
		iv, e := sumFlows(results[tc.Parallel:])
		res.BidirReverse = &Sum{Intervals: iv, End: e}
	}
	return res, errors.Join(failed...)
}

// sumFlows adds up flows of one direction: intervals by index (they share
// boundaries; a flow that ended early adds nothing to later ones), bytes
// and counts summed, seconds the longest, RTTs the smallest minimum and the
// mean of the means, verified only if every flow was.
func sumFlows(flows []*Result) ([]Interval, End) {
	var ivs []Interval
	var srttN []int
	for _, r := range flows {
		for k, iv := range r.Intervals {
			if k == len(ivs) {
				ivs = append(ivs, Interval{Start: iv.Start, Omitted: iv.Omitted})
				srttN = append(srttN, 0)
			}
			s := &ivs[k]
			s.End = max(s.End, iv.End)
			s.Bytes += iv.Bytes
			s.Retransmits += iv.Retransmits
			s.Cwnd += iv.Cwnd
			s.SRTTms += iv.SRTTms
			srttN[k]++
		}
	}
	for k := range ivs {
		s := &ivs[k]
		if s.End > s.Start {
			s.BitsPerSec = float64(s.Bytes) * 8 / (s.End - s.Start)
		}
		s.SRTTms /= float64(srttN[k])
	}
	if ivs == nil {
		ivs = []Interval{}
	}
	e := End{Verified: true, RTOCauses: map[string]int64{}}
	var ecnSum *ECNResult
	var good float64
	for i, r := range flows {
		f := r.End
		if i == 0 {
			e.CC, e.Recovery, e.Reverse, e.MSS, e.MinRTTms = f.CC, f.Recovery, f.Reverse, f.MSS, f.MinRTTms
		}
		e.Bytes += f.Bytes
		e.SenderBytes += f.SenderBytes
		e.Seconds = max(e.Seconds, f.Seconds)
		e.Retransmits += f.Retransmits
		e.RTOs += f.RTOs
		for k, v := range f.RTOCauses {
			e.RTOCauses[k] += v
		}
		if f.MinRTTms > 0 && (e.MinRTTms == 0 || f.MinRTTms < e.MinRTTms) {
			e.MinRTTms = f.MinRTTms
		}
		e.MeanSRTTms += f.MeanSRTTms / float64(len(flows))
		e.Verified = e.Verified && f.Verified
		if i == 0 || e.Verification == f.Verification {
			e.Verification = f.Verification
		} else {
			e.Verification = VerifyPattern + "+" + VerifySHA256 // flows checked differently
		}
		e.OmittedSeconds = max(e.OmittedSeconds, f.OmittedSeconds)
		e.OmittedBytes += f.OmittedBytes
		good += f.ThroughputBps
		if f.Error != "" && e.Error == "" {
			e.Error = fmt.Sprintf("flow %d: %s", i+1, f.Error)
		}
		if x := f.ECN; x != nil {
			if ecnSum == nil {
				ecnSum = &ECNResult{Requested: x.Requested, Negotiated: true, Validated: true, Codepoint: x.Codepoint}
			}
			ecnSum.Negotiated = ecnSum.Negotiated && x.Negotiated
			ecnSum.Validated = ecnSum.Validated && x.Validated
			ecnSum.ECTSent += x.ECTSent
			ecnSum.ECTRecv += x.ECTRecv
			ecnSum.CERecv += x.CERecv
			ecnSum.ECEAcks += x.ECEAcks
			ecnSum.Reductions += x.Reductions
		}
	}
	e.ECN = ecnSum
	// The sum's goodput is the flows' goodputs added (each over its own
	// time, omitted period excluded), as iperf3's [SUM] line.
	e.ThroughputBps = good
	return ivs, e
}

// intervalAgg releases interval k of a test once every flow still running
// has delivered it, as per-flow lines and a sum per direction.
type intervalAgg struct {
	mu      sync.Mutex
	tc      TestConfig
	n       int
	got     []map[int]Interval // per interval index: flow → interval
	ended   []bool
	counts  []int // intervals delivered per flow
	emitted int   // intervals released so far
}

func newIntervalAgg(n int, tc TestConfig) *intervalAgg {
	return &intervalAgg{tc: tc, n: n, ended: make([]bool, n), counts: make([]int, n)}
}

func (a *intervalAgg) add(flow int, iv Interval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := a.counts[flow]
	a.counts[flow]++
	for len(a.got) <= k {
		a.got = append(a.got, map[int]Interval{})
	}
	a.got[k][flow] = iv
	a.release()
}

func (a *intervalAgg) done(flow int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended[flow] = true
	a.release()
}

// release emits every complete interval in order (a.mu held).
func (a *intervalAgg) release() {
	for a.emitted < len(a.got) {
		k := a.emitted
		for f := 0; f < a.n; f++ {
			if _, ok := a.got[k][f]; !ok && !a.ended[f] {
				return
			}
		}
		a.emitted++
		if a.tc.OnInterval == nil {
			continue
		}
		for _, rev := range []bool{false, true} {
			var flows []*Result
			for f := 0; f < a.n; f++ {
				reverse := a.tc.Flow.Reverse != (f >= a.tc.Parallel)
				iv, ok := a.got[k][f]
				if reverse != rev || !ok {
					continue
				}
				a.tc.OnInterval(f+1, rev, iv)
				flows = append(flows, &Result{Intervals: []Interval{iv}})
			}
			if len(flows) > 0 {
				sum, _ := sumFlows(flows)
				a.tc.OnInterval(0, rev, sum[0])
			}
		}
	}
}
