package campaign

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"cclab/eval"
	"cclab/internal/units"
	"cclab/link"
)

// PathProfile is what a campaign measured of one path (one direction): the
// scenario path profile `cclab campaign profile` writes (docs/campaigns.md,
// "Profile").
type PathProfile struct {
	Name      string // topology name: "<group>-<from>-<to>" (group intra or inter)
	Pair      Pair
	Group     string // GroupIntra or GroupInter
	Transfers int    // done transfers measured
	// MinRTT is the smallest RTT sample of any transfer: the path's
	// propagation delay plus its smallest queueing.
	MinRTT time.Duration
	// SRTT are the 10th, 50th and 90th percentiles of the transfers' mean
	// smoothed RTTs: the RTT distribution under the campaign's own load.
	SRTT [3]time.Duration
	// LossRate is the data packets retransmitted over those sent, all
	// transfers pooled.
	LossRate float64
	// Loss is the Gilbert-Elliott fit (link.FitGE, its Best model) of the
	// sender qlogs' loss sequences (transfer.qlog: true), the transfers'
	// sequences joined in plan order, or, without qlogs, the Bernoulli
	// model of LossRate (p = LossRate, r = 1 − p, h = 0, k = 1: no
	// burstiness measured). FromQlog says which; Fit is the whole fit.
	Loss     link.GEConfig
	Fit      link.GEFit
	FromQlog bool
	// RateBps estimates the bottleneck rate: the largest goodput of a
	// transfer on the path (a lower bound of the rate; bits/s).
	RateBps float64
	// QueuePackets estimates the bottleneck buffer: the queueing delay of
	// the 90th-percentile SRTT over the min RTT at RateBps, in MTU-sized
	// packets, at least MinQueuePackets.
	QueuePackets int
}

// Profile constants.
const (
	// ProfilePacket is the packet size the queue estimate counts in, bytes
	// (an Ethernet MTU).
	ProfilePacket = 1500
	// MinQueuePackets is the smallest queue a profile gets, packets.
	MinQueuePackets = 4
)

// Profiles computes the path profiles of the campaign's done transfers,
// one per measured ordered pair, in the spec's pair order.
func Profiles(sp *Spec, rows []Row) []PathProfile {
	byPair := map[Pair][]Row{}
	for _, r := range final(sp, rows) {
		if r.Status == StatusDone {
			p := Pair{r.From, r.To}
			byPair[p] = append(byPair[p], r)
		}
	}
	var out []PathProfile
	for _, pair := range sp.Pairs {
		rs := byPair[pair]
		if len(rs) == 0 {
			continue
		}
		from, to := sp.Host(pair.From), sp.Host(pair.To)
		pp := PathProfile{Pair: pair, Group: PathGroup(from.Group, to.Group), Transfers: len(rs), MinRTT: time.Duration(math.MaxInt64)}
		pp.Name = pp.Group + "-" + pair.From + "-" + pair.To
		var srtts []float64
		var retx, sent int64
		var seq []bool
		for _, r := range rs {
			if r.MinRTTms > 0 {
				pp.MinRTT = min(pp.MinRTT, msDur(r.MinRTTms))
			}
			srtts = append(srtts, r.MeanSRTTms)
			retx += r.Retransmits
			sent += max(r.PacketsSent, 0)
			pp.RateBps = max(pp.RateBps, r.GoodputBps)
			if r.SenderQlog != "" {
				s, _ := LossSequence([]byte(r.SenderQlog))
				seq = append(seq, s...)
			}
		}
		if pp.MinRTT == time.Duration(math.MaxInt64) {
			pp.MinRTT = 0
		}
		for i, q := range []float64{0.1, 0.5, 0.9} {
			if len(srtts) > 0 {
				pp.SRTT[i] = msDur(eval.Quantile(srtts, q))
			}
		}
		if sent > 0 {
			pp.LossRate = min(float64(retx)/float64(sent), 1)
		}
		pp.Loss = link.GEConfig{P: pp.LossRate, R: 1 - pp.LossRate, H: 0, K: 1}
		pp.Fit = link.GEFit{Packets: sent, Losses: retx, Rate: pp.LossRate}
		if fit, err := link.FitGE(seq); err == nil {
			pp.Loss, pp.Fit, pp.FromQlog = fit.Best, fit, true
		}
		queueing := max(pp.SRTT[2]-pp.MinRTT, 0).Seconds()
		pp.QueuePackets = max(int(math.Ceil(queueing*pp.RateBps/8/ProfilePacket)), MinQueuePackets)
		out = append(out, pp)
	}
	return out
}

func msDur(ms float64) time.Duration { return time.Duration(ms * 1e6) }

// Profile scenario defaults.
const (
	ProfileRuns        = 3                // seeds per point
	MinProfileDuration = 10 * time.Second // a sized transfer's run bound is at least this
)

// WriteProfileScenario writes the profiles as a scenario file
// (docs/scenarios.md) that `cclab run` replays: one named dumbbell topology
// per path (rate RateBps, one-way delay MinRTT/2, a drop-tail queue of
// QueuePackets, the Gilbert loss model), swept as the topology axis, and
// one case per variant running the campaign's transfer (a sized one
// until done, bounded by three times its time at the path's rate).
func WriteProfileScenario(w io.Writer, sp *Spec, profiles []PathProfile) error {
	if len(profiles) == 0 {
		return fmt.Errorf("campaign %s: no done transfers to profile", sp.Name)
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Path profiles measured by campaign %s (spec digest %s): cclab campaign profile.\n", sp.Name, sp.Digest())
	p("# Replay: cclab run FILE.yaml (simulator), -backends sim,live (also through the relay).\n")
	p("name: %s\n", strconv.Quote(sp.Name+"-profile"))
	p("description: %s\n", strconv.Quote(fmt.Sprintf("the paths of campaign %s replayed: min RTT, loss (Gilbert-Elliott fit), rate and queue estimates", sp.Name)))
	dur := time.Duration(sp.Transfer.Seconds * float64(time.Second))
	traffic := "greedy"
	if sp.Transfer.Bytes > 0 {
		traffic = "greedy:bytes=" + strconv.FormatInt(sp.Transfer.Bytes, 10)
		slowest := math.Inf(1)
		for _, pp := range profiles {
			slowest = min(slowest, pp.RateBps)
		}
		dur = MinProfileDuration
		if slowest > 0 {
			dur = max(dur, (3 * time.Duration(float64(sp.Transfer.Bytes)*8/slowest*float64(time.Second))).Round(time.Second))
		}
		p("until_done: true\n")
	}
	p("duration: %s\n", dur)
	p("runs: %d\n", ProfileRuns)
	p("topologies:\n")
	var names []string
	for _, pp := range profiles {
		names = append(names, pp.Name)
		p("  # %s: %d transfers; min RTT %s; mean SRTT p10/p50/p90 %s/%s/%s; loss %.4g%% (%s over %d packets)\n",
			pp.Pair, pp.Transfers, pp.MinRTT, pp.SRTT[0].Round(time.Microsecond), pp.SRTT[1].Round(time.Microsecond), pp.SRTT[2].Round(time.Microsecond),
			100*pp.LossRate, map[bool]string{true: "Gilbert-Elliott fit of the qlogs' loss sequences", false: "no qlog: Bernoulli"}[pp.FromQlog], pp.Fit.Packets)
		p("  %s:\n    kind: dumbbell\n    bottleneck:\n", pp.Name)
		p("      rate: %s\n", units.FormatRate(math.Max(pp.RateBps, 1e3)))
		p("      delay: %s\n", (pp.MinRTT / 2).Round(time.Microsecond))
		p("      queue: \"droptail:%dp\"\n", pp.QueuePackets)
		if pp.Loss.LossRate() > 0 {
			p("      loss: %s\n", strconv.Quote(pp.Loss.Spec()))
		}
	}
	p("topology: [%s]\n", joinQuoted(names))
	p("flows:\n  - {name: transfer, cc: reno}\n")
	p("cases:\n")
	for _, v := range sp.Variants {
		p("  - name: %s\n    flows:\n      - {name: %s, cc: %s, recovery: %s, traffic: %s}\n", strconv.Quote(v.Name), strconv.Quote(v.Name),
			strconv.Quote(v.CC), strconv.Quote(v.Recovery), strconv.Quote(traffic))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func joinQuoted(ss []string) string {
	var b bytes.Buffer
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
}
