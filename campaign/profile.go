package campaign

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/link"
	"cclab/report/studies"
	"cclab/transport"
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
	// LossRate is the data packets lost over those sent, all transfers
	// pooled: lost as the sender qlog's ACKs show (traceEstimate.wireLost:
	// a timeout's retransmissions of packets that were delivered are no
	// losses), or, for a transfer without a qlog, its retransmissions.
	LossRate float64
	// LossLo and LossHi are LossRate's 95 % interval (wilson).
	LossLo, LossHi float64
	// ProbeLossPackets counts the probe's transmissions in LossRate and
	// the fit: those that found its counted queue below half full
	// (probeEstimate.random), whose losses are the path's random loss,
	// not its own overflows.
	ProbeLossPackets int
	// Loss is the Gilbert-Elliott fit (link.FitGE, its Best model) of the
	// loss sequences the sender qlogs' ACKs show (transfer.qlog: true;
	// traceEstimate.wireLost), the transfers' sequences joined in plan
	// order, or, without qlogs, the Bernoulli
	// model of LossRate (p = LossRate, r = 1 − p, h = 0, k = 1: no
	// burstiness measured). FromQlog says which; Fit is the whole fit.
	Loss     link.GEConfig
	Fit      link.GEFit
	FromQlog bool
	// RevLoss is the loss of the reverse (ACK) direction: the Loss of the
	// reverse pair's profile (To to From, measured by its own transfers'
	// data packets, which cross the links this path's ACKs cross), nil
	// when that pair was not measured. The replay writes it as the
	// bottleneck's rev_loss: the agents' ACKs, handshakes and receiver
	// reports were lost as that direction's data (docs/campaigns.md,
	// "Profile").
	RevLoss *link.GEConfig
	// RateBps estimates the bottleneck rate on the wire (bits/s, IP
	// packets of Packet bytes): the median over the transfers of the
	// largest ACK-train dispersion rate in their sender qlogs, scaled from
	// payload to wire bytes; RateLo and RateHi are the smallest and largest
	// transfer's. RateBound marks a lower bound: no qlog or no train of
	// TrainPackets (then the largest goodput), or no queue ever built
	// (the trains may have been the sender's pace, not the bottleneck's).
	RateBps, RateLo, RateHi float64
	RateBound               bool
	// QueuePackets estimates the bottleneck buffer in packets of Packet
	// bytes: the largest queueing delay (max RTT − min RTT) at RateBps
	// when at least OverflowLosses losses happened with the queue that
	// full (a drop-tail overflow); QueueLo and QueueHi from the overflow
	// losses' queueing delays at RateLo and RateHi. Otherwise the queue
	// never overflowed: QueueBound, and QueuePackets is the larger of the
	// largest queue seen (with a probe, the largest its count kept) and
	// one bandwidth-delay product (a smaller queue
	// would drop in the replay what the transfers never lost).
	QueuePackets, QueueLo, QueueHi int
	QueueBound                     bool
	// Datagram is the largest datagram (UDP payload, bytes) the transfers
	// used (transferDatagram: the segment size their senders reported at
	// their end, else their qlogs' largest data segment, each as the
	// datagram that carries it; the median over the transfers), 0 when
	// none said; Discovered says the agents found it themselves (the
	// spec's transfer.max_datagram unset: datagram size discovery, RFC
	// 8899, up to the route's MTU) and the replay discovers it too, up to
	// a link MTU of Datagram plus the IPv4 and UDP headers
	// (docs/campaigns.md, "Profile").
	Datagram   int
	Discovered bool
	Packet     int // wire packet size, bytes: Datagram (0: the spec's or the default) plus IPv4 and UDP headers
	// tag is the authentication tag the transfers' packets carried
	// (authTag: their senders said they were authenticated), bytes.
	tag int
	// Probed says the pair's probe (Spec.Probe) was done; the rate and the
	// queue then come from it when its qlog shows the bottleneck busy
	// (estimateProbe): the rate over that busy period, RateLo and RateHi
	// its quarters' least and most; the queue the buffer counted from its
	// transmissions (countedBuffer), measured when it overflowed.
	Probed bool
	// HostLimited counts the transfers whose sender reported itself
	// host-limited (docs/metrics.md, "Host-limited runs") or during which
	// a relay on their route was (Row.RelayLimits).
	HostLimited int
	// Warnings say which estimates are only bounds, and why.
	Warnings []string
	// Relay is the spec's relay the path crosses (nil: none); its link is
	// the configured path, written beside the estimates.
	Relay *Relay
}

// Profile constants.
const (
	// MinQueuePackets is the smallest queue a profile gets, packets.
	MinQueuePackets = 4
	// CPURate is the rate above which an unqueued, unshaped path is most
	// likely the hosts' CPU rather than a link (bits/s).
	CPURate = 1e9
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
	probes := probeRows(sp, rows)
	var out []PathProfile
	for _, pair := range sp.Pairs {
		rs := byPair[pair]
		if len(rs) == 0 {
			continue
		}
		pp := PathProfile{Pair: pair, Group: sp.PathKind(pair), Transfers: len(rs), MinRTT: time.Duration(math.MaxInt64),
			Datagram: transfersDatagram(rs), Discovered: sp.Transfer.MaxDatagram == 0}
		pp.Packet = cmp.Or(pp.Datagram, sp.Transfer.MaxDatagram, transport.DefaultMaxDatagram) + link.IPv4UDPOverhead
		for _, r := range rs {
			pp.tag = max(pp.tag, transferTag(r))
		}
		if r, ok := sp.RelayOf(pair); ok {
			pp.Relay = &r
		}
		pp.Name = pp.Group + "-" + pair.From + "-" + pair.To
		var srtts, goodputs []float64
		var lost, sent int64
		var traces []traceEstimate
		for _, r := range rs {
			if r.MinRTTms > 0 {
				pp.MinRTT = min(pp.MinRTT, msDur(r.MinRTTms))
			}
			srtts = append(srtts, r.MeanSRTTms)
			goodputs = append(goodputs, r.GoodputBps)
			var t traceEstimate
			if r.SenderQlog != "" {
				t = estimateTrace([]byte(r.SenderQlog))
				traces = append(traces, t)
			}
			if len(t.wireLost) > 0 {
				lost += int64(countTrue(t.wireLost))
				sent += int64(len(t.wireLost))
			} else {
				lost += r.Retransmits
				sent += max(r.PacketsSent, 0)
			}
			if hostLimited(r.SenderJSON) || len(r.RelayLimits) > 0 {
				pp.HostLimited++
			}
		}
		if pp.MinRTT == time.Duration(math.MaxInt64) {
			pp.MinRTT = 0
		}
		for i, q := range []float64{0.1, 0.5, 0.9} {
			if len(srtts) > 0 {
				pp.SRTT[i] = msDur(studies.Quantile(srtts, q))
			}
		}
		probe := pp.probe(probes[pair])
		if probe != nil {
			// The probe's transmissions that found its counted queue
			// below half full: random loss only (randomLosses).
			pp.ProbeLossPackets = len(probe.random)
			lost += int64(countTrue(probe.random))
			sent += int64(len(probe.random))
		}
		if sent > 0 {
			pp.LossRate = min(float64(lost)/float64(sent), 1)
			pp.LossLo, pp.LossHi = wilson(lost, sent)
		}
		overflow := pp.estimate(traces, goodputs, probe)
		pp.Loss = link.GEConfig{P: pp.LossRate, R: 1 - pp.LossRate, H: 0, K: 1}
		pp.Fit = link.GEFit{Packets: sent, Losses: lost, Rate: pp.LossRate}
		var seq []bool
		for _, t := range traces {
			seq = append(seq, t.wireLost...)
		}
		for _, i := range overflow {
			seq[i] = false // the replay's queue drops these itself
		}
		if probe != nil {
			seq = append(seq, probe.random...)
		}
		if fit, err := link.FitGE(seq); err == nil {
			pp.Loss, pp.Fit, pp.FromQlog = fit.Best, fit, true
		}
		if pp.HostLimited > 0 {
			pp.Warnings = append(pp.Warnings, fmt.Sprintf("%d of %d transfers were host-limited (their senders, or relays on their route, said so): the estimates measure the hosts as much as the path", pp.HostLimited, pp.Transfers))
		}
		out = append(out, pp)
	}
	setRevLoss(out)
	return out
}

// setRevLoss gives each profile the loss of its reverse pair's profile,
// where the campaign measured that pair.
func setRevLoss(profiles []PathProfile) {
	byPair := map[Pair]int{}
	for i, pp := range profiles {
		byPair[pp.Pair] = i
	}
	for i := range profiles {
		if j, ok := byPair[Pair{profiles[i].Pair.To, profiles[i].Pair.From}]; ok {
			l := profiles[j].Loss
			profiles[i].RevLoss = &l
		}
	}
}

// WilsonZ is the standard normal quantile of a two-sided 95 % interval.
const WilsonZ = 1.959964

// wilson returns the 95 % Wilson score interval of a proportion of k in n
// (E. B. Wilson, "Probable inference, the law of succession, and
// statistical inference", JASA 22, 1927): unlike the normal
// approximation, it stays inside [0, 1] and is not empty at k = 0, which
// a path's loss of a few packets in a thousand needs.
func wilson(k, n int64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p, z2 := float64(k)/float64(n), WilsonZ*WilsonZ
	nf := float64(n)
	mid := (p + z2/(2*nf)) / (1 + z2/nf)
	half := WilsonZ / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(mid-half, 0), min(mid+half, 1)
}

// countTrue returns how many of bs are true.
func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// transfersDatagram returns the median over the transfers of the largest
// datagram each used (transferDatagram), 0 when none said.
func transfersDatagram(rs []Row) int {
	var ds []float64
	for _, r := range rs {
		if d := transferDatagram(r); d > 0 {
			ds = append(ds, float64(d))
		}
	}
	if len(ds) == 0 {
		return 0
	}
	return int(math.Round(studies.Quantile(ds, 0.5)))
}

// transferDatagram returns the largest datagram (UDP payload, bytes) a
// transfer used: the datagram that carries the segment size its sender
// reported at its end (end.mss: after datagram size discovery, the size
// discovered), else its qlog's largest data segment (transport.DatagramFor),
// plus the authentication tag (transport.TagLen) when the sender's JSON
// says the transfer was authenticated (end.auth, as agents' transfers
// are); 0 when neither tells.
func transferDatagram(r Row) int {
	end, _ := decodeSenderEnd(r.SenderJSON) // malformed: the qlog tells
	seg := end.MSS
	if seg <= 0 && r.SenderQlog != "" {
		seg = estimateTrace([]byte(r.SenderQlog)).payload
	}
	if seg <= 0 {
		return 0
	}
	return transport.DatagramFor(seg) + transferTag(r)
}

// transferTag is the authentication tag of a transfer's packets (authTag
// of its sender's end.auth), bytes.
func transferTag(r Row) int {
	end, _ := decodeSenderEnd(r.SenderJSON)
	return authTag(end.Auth)
}

// authTag is the bytes an authenticated packet carries beside its segment
// (transport.TagLen) when a sender's end.auth says it was authenticated,
// else 0.
func authTag(auth json.RawMessage) int {
	if len(auth) == 0 || string(auth) == "null" {
		return 0
	}
	return transport.TagLen
}

// probeRows returns each pair's probe (ProbePlan) that is done, the last
// stored one.
func probeRows(sp *Spec, rows []Row) map[Pair]Row {
	out := map[Pair]Row{}
	for _, r := range rows {
		if r.Digest == sp.Digest() && r.Status == StatusDone && r.Round == 0 && r.Variant == ProbeVariant {
			out[Pair{r.From, r.To}] = r
		}
	}
	return out
}

// probe estimates the bottleneck from the pair's probe row (none: nil),
// with a warning when it does not tell.
func (pp *PathProfile) probe(r Row) *probeEstimate {
	if r.Status != StatusDone {
		return nil
	}
	pp.Probed = true
	pe, ok := estimateProbe(estimateTrace([]byte(r.SenderQlog)), pp.MinRTT)
	if !ok {
		pp.Warnings = append(pp.Warnings, fmt.Sprintf("probe: no busy period of %d packets in its qlog (larger probe.bytes, or a probe.rate above the path's): estimated from the transfers", ProbeRatePackets))
		return nil
	}
	if hostLimited(r.SenderJSON) {
		pp.Warnings = append(pp.Warnings, "probe: its sender reported itself host-limited: it may not have paced fast enough to fill the queue")
	}
	switch {
	case pe.fromDelay:
		d := pe.delayTail
		pp.Warnings = append(pp.Warnings, fmt.Sprintf("probe: its count (at least %.0f packets) failed its own overflow test (transmissions sent again that were delivered, e.g. after a timeout, take packets out of it) or its overflows did not come at the full queue's delay, but its losses came at the full queue's delay (%v) in %d of the %d trains of %d packets with one, %.1f times as often as at under half of it: the queue is that delay at the rate, %.0f packets [%.0f, %.0f] (a host stall that held the ACKs back would inflate it)",
			pe.count, pe.queue.Round(100*time.Microsecond), d.atPlateau, d.trains, ProbeTrainPackets, d.lossFull/max(d.lossLow, 1e-9), pe.buffer, pe.bufferLo, pe.bufferHi))
	case pe.notTail != "":
		pp.Warnings = append(pp.Warnings, "probe: its queue (at least "+strconv.Itoa(int(math.Round(pe.buffer)))+" packets) not seen to overflow: "+pe.notTail+"; the queue is a bound")
	case !pe.overflowed || pe.overflows < OverflowLosses:
		pp.Warnings = append(pp.Warnings, fmt.Sprintf("probe: its queue (at least %.0f packets) not seen to overflow (%d losses at its fullest): the queue is a bound (larger probe.bytes)", pe.buffer, pe.overflows))
	case pe.disputed:
		why := ""
		if pe.plateauAgrees {
			why = " (the count: the full queue's delay at the rate agrees with it)"
		}
		pp.Warnings = append(pp.Warnings, fmt.Sprintf("probe: its count (%.0f packets) and the queueing delay at its overflow losses (%.0f packets at the rate) disagree by more than %.0f %%: the queue is stated with an interval holding both, %.0f written%s",
			pe.count, pe.tail.at, 100*BufferAgreement, pe.buffer, why))
	}
	return &pe
}

// estimate sets the rate and queue estimates from the probe (nil: none)
// or else the transfers' traces (goodputs: the fallback lower bound) and
// returns the indexes, in the
// joined loss sequence, of the losses counted as buffer overflows when the
// queue was measured.
func (pp *PathProfile) estimate(traces []traceEstimate, goodputs []float64, probe *probeEstimate) []int {
	var rates []float64
	var maxRTT time.Duration
	for _, t := range traces {
		if t.trainBps > 0 && t.payload > 0 {
			rates = append(rates, t.trainBps*wireShare(t.payload, pp.tag))
		}
		maxRTT = max(maxRTT, t.maxRTT)
	}
	pkt := float64(pp.Packet)
	switch {
	case probe != nil:
		wire := wireShare(probe.payload, pp.tag)
		pp.RateBps, pp.RateLo, pp.RateHi = probe.rate*wire, probe.rateLo*wire, probe.rateHi*wire
		maxRTT = pp.MinRTT + probe.queue
	case len(rates) > 0:
		pp.RateBps, pp.RateLo, pp.RateHi = studies.Quantile(rates, 0.5), slices.Min(rates), slices.Max(rates)
	default:
		pp.RateBps = slices.Max(goodputs)
		pp.RateLo, pp.RateHi, pp.RateBound = pp.RateBps, math.Inf(1), true
		pp.Warnings = append(pp.Warnings, "rate: no ACK train of "+strconv.Itoa(TrainPackets)+" packets in sender qlogs (set transfer.qlog: true, larger transfers): the largest goodput, a lower bound")
		maxRTT = pp.SRTT[2] // the old estimate: the 90th-percentile mean SRTT
	}
	qmax := max(maxRTT-pp.MinRTT, 0)
	perPkt := time.Duration(pkt * 8 / max(pp.RateBps, 1) * 1e9)
	if !pp.RateBound && qmax < 2*perPkt {
		pp.RateBound = true
		pp.Warnings = append(pp.Warnings, fmt.Sprintf("rate: no queue built at the bottleneck (largest queueing delay %v): the trains may be the senders' pace, the rate a lower bound", qmax.Round(10*time.Microsecond)))
	}
	if pp.RateBound && pp.RateBps > CPURate && qmax < 2*perPkt {
		pp.Warnings = append(pp.Warnings, "rate: above "+units.FormatRate(CPURate)+" with no queue: most likely the hosts' CPU, not a link, limited it (an unshaped path)")
	}
	packets := func(d time.Duration, rate float64) int { return int(math.Round(d.Seconds() * rate / 8 / pkt)) }
	var overflow []int
	var lo time.Duration
	base := 0
	for _, t := range traces {
		for _, l := range t.lossAt {
			if q := l.rtt - pp.MinRTT; qmax > 0 && q >= time.Duration(OverflowShare*float64(qmax)) {
				overflow = append(overflow, base+l.idx)
				lo = cmp.Or(min(lo, q), q)
			}
		}
		base += len(t.lost)
	}
	if probe != nil && probe.overflowed && probe.overflows >= OverflowLosses && !pp.RateBound {
		pp.QueuePackets = max(int(math.Round(probe.buffer)), MinQueuePackets)
		pp.QueueLo, pp.QueueHi = int(math.Round(probe.bufferLo)), int(math.Round(probe.bufferHi))
		return overflow
	}
	// The transfers' high-RTT losses tell the queue only without a probe:
	// with one, qmax is the probe's own plateau, which a probe that did
	// not overflow never showed to be the full queue's, and the transfers
	// sent less than the probe; their losses near it are random loss near
	// a part-full queue (a CI-mode run at load 10-13 wrote 53p [45, 65]
	// against 200 from them, its probe at least 45 packets), so the queue
	// is the probe's bound.
	if len(overflow) >= OverflowLosses && !pp.RateBound && probe == nil {
		pp.QueuePackets = max(packets(qmax, pp.RateBps), MinQueuePackets)
		pp.QueueLo, pp.QueueHi = packets(lo, pp.RateLo), packets(qmax, pp.RateHi)
		return overflow
	}
	seen, least := packets(qmax, pp.RateBps), ""
	if probe != nil && !pp.RateBound {
		seen = int(math.Round(probe.buffer)) // the largest queue its count kept: host stalls do not move it
		// The bound stated is the count at the rate's upper quartile: a
		// rate estimated low (a loaded host) counts more than the queue
		// held (230 packets at 6.49 Mbit/s on a 10 Mbit/s, 200-packet path).
		if lo := int(math.Round(probe.bufferLo)); lo < seen {
			pp.QueueLo, least = lo, fmt.Sprintf(" (%d at the rate's upper quartile, the bound stated)", lo)
		}
	}
	pp.QueueBound, pp.QueueLo, pp.QueueHi = true, min(seen, cmp.Or(pp.QueueLo, seen)), math.MaxInt
	pp.QueuePackets = max(seen, packets(pp.MinRTT, pp.RateBps), MinQueuePackets)
	pp.Warnings = append(pp.Warnings, fmt.Sprintf("queue: never seen to overflow (%d losses at its fullest): at least %d packets%s; %d written (the larger of that and one bandwidth-delay product)", len(overflow), seen, least, pp.QueuePackets))
	return nil
}

// wireShare is the wire bytes per payload byte of a trace whose largest
// data segment was payload bytes, its packets carrying an authentication
// tag of tag bytes: the datagram of that segment (transport.DatagramFor)
// with the tag, plus the IPv4 and UDP headers, over the payload. The
// trace's own size, not a default: a probe or transfer that discovered
// 1,472-byte datagrams scaled by a 1,200-byte datagram's packet had its
// rate written 18 % low.
func wireShare(payload, tag int) float64 {
	return float64(transport.DatagramFor(payload)+tag+link.IPv4UDPOverhead) / float64(payload)
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
	return writeScenario(w, sp, profiles, replay{name: sp.Name + "-profile", runs: ProfileRuns,
		header: "# Path profiles measured by campaign %s (spec digest %s): cclab campaign profile.\n" +
			"# Replay: cclab run FILE.yaml (simulator), -backends sim,live (also through the relay).\n"})
}

// replay says how a profile scenario replays the paths: the experiment's
// name, runs per point or their seeds, backends (nil: the scenario's
// default, sim) and the header comment (a format of the campaign's name
// and digest).
type replay struct {
	name     string
	runs     int
	seeds    []uint64
	backends []string
	header   string
	// cases, when not nil, replace the one case per variant: each
	// measured transfer replayed with the transfers that overlapped it
	// (overlapCases).
	cases []replayCase
}

func writeScenario(w io.Writer, sp *Spec, profiles []PathProfile, rp replay) error {
	if len(profiles) == 0 {
		return fmt.Errorf("campaign %s: no done transfers to profile", sp.Name)
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(rp.header, sp.Name, sp.Digest())
	p("name: %s\n", strconv.Quote(rp.name))
	p("description: %s\n", strconv.Quote(fmt.Sprintf("the paths of campaign %s (spec digest %s) replayed: min RTT, loss (Gilbert-Elliott fit), rate and queue estimates", sp.Name, sp.Digest())))
	if len(rp.backends) > 0 {
		p("backends: [%s]\n", strings.Join(rp.backends, ", "))
	}
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
		if !slices.Contains(rp.backends, "live") {
			p("until_done: true\n") // the live backend refuses it: its sized flows end by themselves
		}
	}
	p("duration: %s\n", dur)
	if len(rp.seeds) > 0 {
		p("seeds: %s\n", strings.ReplaceAll(fmt.Sprint(rp.seeds), " ", ", "))
	} else {
		p("runs: %d\n", rp.runs)
	}
	p("topologies:\n")
	var names []string
	for _, pp := range profiles {
		names = append(names, pp.Name)
		probePkts := ""
		if pp.ProbeLossPackets > 0 {
			probePkts = fmt.Sprintf(", %d of them the probe's below half its queue", pp.ProbeLossPackets)
		}
		p("  # %s: %d transfers; min RTT %s; mean SRTT p10/p50/p90 %s/%s/%s; loss %.3g%% [%.3g%%, %.3g%%] (%s over %d packets%s)\n",
			pp.Pair, pp.Transfers, roundDelay(pp.MinRTT), roundDelay(pp.SRTT[0]), roundDelay(pp.SRTT[1]), roundDelay(pp.SRTT[2]),
			100*pp.LossRate, 100*pp.LossLo, 100*pp.LossHi, map[bool]string{true: "Gilbert-Elliott fit of the losses the qlogs' ACKs show, buffer overflows left out", false: "no qlog: Bernoulli"}[pp.FromQlog], pp.Fit.Packets, probePkts)
		p("  # rate %s, queue %s%s\n", rangeText(pp.RateBps, pp.RateLo, pp.RateHi, pp.RateBound, formatRate),
			rangeText(float64(pp.QueuePackets), float64(pp.QueueLo), float64(pp.QueueHi), pp.QueueBound, func(v float64) string { return strconv.Itoa(int(v)) + "p" }),
			map[bool]string{true: " (the probe's)", false: ""}[pp.Probed])
		p("  # datagrams %s\n", datagramText(pp, sp))
		if r := pp.Relay; r != nil {
			p("  # via relay %s (%s): configured each way: rate %s, delay %s, queue %s, loss %s\n", r.Name, r.Listen,
				formatRate(r.Link.Rate), r.Link.Delay, cmp.Or(r.Link.Queue, "default"), cmp.Or(r.Link.Loss, "none"))
		}
		for _, w := range pp.Warnings {
			p("  # warning: %s\n", w)
		}
		p("  %s:\n    kind: dumbbell\n", pp.Name)
		if pp.Discovered && pp.Datagram > 0 {
			// The replay's flows discover their size up to this MTU, as
			// the agents did up to their route's.
			p("    mtu: %dB\n", pp.Datagram+link.IPv4UDPOverhead)
		}
		p("    bottleneck:\n")
		p("      rate: %s\n", formatRate(math.Max(pp.RateBps, 1e3)))
		p("      delay: %s\n", roundDelay(pp.MinRTT/2))
		p("      queue: \"droptail:%dp\"\n", pp.QueuePackets)
		if pp.Loss.LossRate() > 0 {
			p("      loss: %s\n", strconv.Quote(pp.Loss.Spec()))
		}
		if pp.RevLoss != nil && pp.RevLoss.LossRate() > 0 {
			p("      rev_loss: %s\n", strconv.Quote(pp.RevLoss.Spec()))
		}
	}
	p("topology: [%s]\n", joinQuoted(names))
	p("flows:\n  - {name: transfer, cc: reno}\n")
	p("cases:\n")
	size := replayDatagram(sp)
	if rp.cases != nil {
		var cb strings.Builder
		for _, c := range rp.cases {
			c.writeCase(&cb, dur, traffic, size, sp.Transfer.Bytes <= 0)
		}
		b.WriteString(cb.String())
	} else {
		for _, v := range sp.Variants {
			p("  - name: %s\n    flows:\n      - {name: %s, cc: %s, recovery: %s, traffic: %s%s}\n", strconv.Quote(v.Name), strconv.Quote(v.Name),
				strconv.Quote(v.CC), strconv.Quote(v.Recovery), strconv.Quote(traffic), size)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// datagramText describes the datagram size a path's transfers used and
// how the replay matches it.
func datagramText(pp PathProfile, sp *Spec) string {
	switch {
	case sp.Transfer.MaxDatagram > 0:
		return fmt.Sprintf("of %d bytes (transfer.max_datagram), replayed at that size", sp.Transfer.MaxDatagram)
	case pp.Datagram > 0:
		return fmt.Sprintf("discovered by the senders: %d bytes; the replay discovers up to mtu %d", pp.Datagram, pp.Datagram+link.IPv4UDPOverhead)
	}
	return fmt.Sprintf("discovered by the senders, size not reported; the replay discovers up to mtu %d (the link default)", link.DefaultMTU)
}

// replayDatagram is the datagram setting of the replay's flows: the
// spec's transfer.max_datagram (the agents' senders used it throughout),
// or, without one, datagram size discovery (the agents discover theirs up
// to their route's MTU; the replay up to its topology's mtu, the size the
// transfers reached, or link.DefaultMTU where none was measured).
func replayDatagram(sp *Spec) string {
	if sp.Transfer.MaxDatagram > 0 {
		return ", datagram: " + strconv.Itoa(sp.Transfer.MaxDatagram) + "B"
	}
	return ", pmtud: true"
}

// formatRate writes a rate to three significant digits ("9.87Mbit").
func formatRate(bps float64) string {
	if bps <= 0 || math.IsInf(bps, 0) {
		return units.FormatRate(bps)
	}
	scale := math.Pow(10, math.Floor(math.Log10(bps))-2)
	return units.FormatRate(math.Round(bps/scale) * scale)
}

// roundDelay rounds a delay to 0.1 ms, the precision the profile writes.
func roundDelay(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

// rangeText describes an estimate: "v [lo, hi]", or "at least v" for a
// bound.
func rangeText(v, lo, hi float64, bound bool, f func(float64) string) string {
	if bound {
		return "at least " + f(lo) + " (a bound)"
	}
	return fmt.Sprintf("%s [%s, %s]", f(v), f(lo), f(hi))
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
