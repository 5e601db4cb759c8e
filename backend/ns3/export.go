package ns3

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/internal/spec"
	"cclab/link"
	"cclab/plan"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// UnlimitedRate is the rate given to ns-3 for a link the plan leaves
// unlimited (sender access links without a rate, receivers' access links),
// bits/s: ns-3's point-to-point links always serialize, so they get
// 100 Gbit/s, where a 1500-byte packet takes 0.12 µs.
const UnlimitedRate = 100e9

// maxTransfers bounds the ON/OFF periods drawn ahead for one flow.
const maxTransfers = 100000

// Unsupported is the error for a plan feature the ns-3 backend cannot
// express: the run is refused rather than approximated.
type Unsupported struct {
	Where   string // the plan element: "hop left>right", "flow 2"
	Feature string // what it asks for
	Reason  string // why ns-3 (3.37) cannot run it
}

func (e *Unsupported) Error() string {
	return fmt.Sprintf("ns3 backend: %s: %s is not supported: %s", e.Where, e.Feature, e.Reason)
}

// record is one line of the plan file: a kind and ordered key=value tokens.
type record struct {
	kind string
	kv   []string
}

func (r *record) set(k string, v any) {
	var s string
	switch x := v.(type) {
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case time.Duration:
		s = strconv.FormatFloat(x.Seconds(), 'g', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	r.kv = append(r.kv, k+"="+s)
}

func (r *record) String() string { return r.kind + " " + strings.Join(r.kv, " ") }

// Export turns a plan into the plan file cclab-ns3 reads (format in
// cclab-ns3.cc), or an *Unsupported error naming the first feature ns-3
// cannot express.
func Export(p *plan.Plan) ([]byte, error) {
	if p.Kind != "dumbbell" && p.Kind != "chain" {
		return nil, &Unsupported{"topology", "kind " + p.Kind, "the ns-3 backend builds dumbbells and chains"}
	}
	if p.PayloadOnly {
		return nil, &Unsupported{"topology", "payload_only", "ns-3 links carry whole IP packets"}
	}
	if p.Access.Queue != plan.DefaultAccessQueue {
		return nil, &Unsupported{"access", "queue " + p.Access.Queue, "access links have the default large DropTail queue"}
	}
	var b strings.Builder
	run := record{kind: "run"}
	run.set("duration", p.Duration)
	run.set("seed", p.Seed)
	interval := p.Interval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	run.set("interval", interval)
	run.set("routers", len(p.Routers))
	b.WriteString(run.String() + "\n")
	k := len(p.Hops[plan.Fwd])
	for span := range k {
		fw, rv := &p.Hops[plan.Fwd][span], &p.Hops[plan.Rev][k-1-span]
		if fw.Link.Delay != rv.Link.Delay {
			return nil, &Unsupported{"hop " + fw.Name, "different delays per direction",
				"an ns-3 point-to-point channel has one delay"}
		}
		for _, h := range []*plan.Hop{fw, rv} {
			r, err := hopRecord(h, p.Seed)
			if err != nil {
				return nil, err
			}
			b.WriteString(r.String() + "\n")
		}
	}
	for i := range p.Flows {
		r, err := flowRecord(p, &p.Flows[i])
		if err != nil {
			return nil, err
		}
		b.WriteString(r.String() + "\n")
	}
	return []byte(b.String()), nil
}

// hopRecord describes one direction of a hop: rate, delay, queue, loss; seed
// is the run's (the key of a hashed loss stage).
func hopRecord(h *plan.Hop, seed uint64) (*record, error) {
	where := "hop " + h.Name
	l := h.Link
	switch {
	case l.Trace != "" || l.TraceData != nil:
		return nil, &Unsupported{where, "a rate trace", "ns-3 point-to-point links have a fixed rate"}
	case l.Jitter != 0:
		return nil, &Unsupported{where, "jitter", "ns-3 point-to-point channels have a fixed delay"}
	case len(h.Cross) > 0:
		return nil, &Unsupported{where, "cross traffic", "the ns-3 backend runs TCP flows only"}
	case l.MTU != 0 && l.MTU != link.DefaultMTU:
		return nil, &Unsupported{where, fmt.Sprintf("mtu %d", l.MTU), "ns-3 links use the 1500-byte default"}
	}
	r := &record{kind: "hop"}
	r.set("id", h.ID)
	r.set("dir", h.Dir)
	r.set("span", h.Span)
	rate := l.Rate
	if rate <= 0 {
		rate = UnlimitedRate
	}
	r.set("rate", math.Round(rate))
	r.set("delay", l.Delay)
	device, err := queueRecord(r, where, l.Queue, rate, l.Delay)
	if err != nil {
		return nil, err
	}
	if err := lossRecord(r, where, l.Loss, link.HashedKey(seed, h.Stream), device); err != nil {
		return nil, err
	}
	return r, nil
}

// limitText is a qdisc limit as an ns-3 QueueSize ("20p", "30000B").
func limitText(l qdisc.Limit) string {
	if l.Bytes > 0 {
		return strconv.Itoa(l.Bytes) + "B"
	}
	return strconv.Itoa(l.Packets) + "p"
}

// queueRecord maps the hop's qdisc: DropTail is the device's own queue
// (device true); RED and CoDel are ns-3 queue discs above a one-packet
// device queue.
func queueRecord(r *record, where, q string, rate float64, delay time.Duration) (device bool, err error) {
	if q == "" {
		q = link.DefaultQueue
	}
	_, cfg, err := qdisc.Registry.Config(q)
	if err != nil {
		return false, fmt.Errorf("%s: %v", where, err)
	}
	switch c := cfg.(type) {
	case *qdisc.DropTailConfig:
		device = true
		r.set("qtype", "device")
		r.set("qlimit", limitText(c.Limit))
	case *qdisc.REDConfig:
		if c.Bytes || c.Min.Bytes > 0 || c.Max.Bytes > 0 {
			return false, &Unsupported{where, "RED in byte mode", "the ns-3 backend maps RED in packets only"}
		}
		if c.ECN {
			return false, &Unsupported{where, "RED ecn", "the ns-3 backend runs flows without ECN"}
		}
		r.set("qtype", "ns3::RedQueueDisc")
		r.set("q.MinTh", c.Min.Packets)
		r.set("q.MaxTh", c.Max.Packets)
		r.set("q.LInterm", 1/c.MaxP)
		r.set("q.QW", c.Wq)
		r.set("q.MaxSize", limitText(c.Limit))
		r.set("q.Gentle", c.Gentle)
		r.set("q.MeanPktSize", link.DefaultMTU)
		r.set("q.LinkBandwidth", strconv.FormatFloat(rate, 'f', 0, 64)+"bps")
		r.set("q.LinkDelay", strconv.FormatInt(delay.Nanoseconds(), 10)+"ns")
	case *qdisc.CoDelConfig:
		if c.ECN {
			return false, &Unsupported{where, "CoDel ecn", "the ns-3 backend runs flows without ECN"}
		}
		r.set("qtype", "ns3::CoDelQueueDisc")
		r.set("q.Target", strconv.FormatInt(c.Target.Nanoseconds(), 10)+"ns")
		r.set("q.Interval", strconv.FormatInt(c.Interval.Nanoseconds(), 10)+"ns")
		r.set("q.MaxSize", limitText(c.Limit))
		r.set("q.MinBytes", link.DefaultMTU)
	default:
		name, _, _ := spec.Split(q)
		return false, &Unsupported{where, "queue " + name, "the ns-3 backend maps droptail, red and codel"}
	}
	return device, nil
}

// lossRecord maps the loss stage: Bernoulli, hashed (with key, the key the
// simulator's link gets; only in front of the device's own queue, device)
// or Gilbert-Elliott.
func lossRecord(r *record, where, loss string, key uint64, device bool) error {
	if loss == "" || loss == "none" {
		return nil
	}
	if p, err := strconv.ParseFloat(loss, 64); err == nil {
		loss = "bernoulli:p=" + strconv.FormatFloat(p, 'g', -1, 64)
	}
	name, params, err := spec.Split(loss)
	if err != nil {
		return fmt.Errorf("%s: loss %q: %v", where, loss, err)
	}
	switch name {
	case "bernoulli":
		var c link.BernoulliConfig
		if err := spec.Apply("bernoulli", &c, params); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if c.P > 0 {
			r.set("loss", "bernoulli")
			r.set("p", c.P)
		}
	case "hashed":
		var c link.HashedConfig
		if err := spec.Apply("loss hashed", &c, params); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if !device {
			return &Unsupported{where, "hashed loss with a queue disc", "cclab-ns3 counts a hashed stage's packets as they enter the device queue, behind an ns-3 queue disc's drops (use droptail)"}
		}
		r.set("loss", "hashed")
		r.set("p", c.P)
		r.set("key", key)
	case "ge", "gilbert-elliott", "gemodel":
		c := link.GEConfig{R: -1, H: 0, K: 1} // link/loss.go's defaults
		if err := spec.Apply("loss ge", &c, params); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if c.R < 0 {
			c.R = 1 - c.P
		}
		r.set("loss", "ge")
		r.set("p", c.P)
		r.set("r", c.R)
		r.set("h", c.H)
		r.set("k", c.K)
	default:
		return &Unsupported{where, "loss " + name, "the ns-3 backend maps bernoulli, hashed and ge loss"}
	}
	return nil
}

// flowRecord maps one flow: its path, controller, recovery, socket
// settings and the application's transfers.
func flowRecord(p *plan.Plan, f *plan.Flow) (*record, error) {
	where := fmt.Sprintf("flow %d (%s)", f.ID, f.Name)
	switch {
	case f.Kernel != nil:
		return nil, &Unsupported{where, "stack kernel", "kernel TCP runs on the live backend only"}
	case f.Mode != "" && f.Mode != "stream":
		return nil, &Unsupported{where, "mode " + f.Mode, "ns-3 runs TCP (stream) flows only"}
	case f.ECN:
		return nil, &Unsupported{where, "ecn", "the ns-3 backend runs flows without ECN"}
	case f.Window > 0:
		return nil, &Unsupported{where, "window", "ns-3 TCP has no sender window cap apart from its buffers"}
	case f.Background:
		return nil, &Unsupported{where, "background", "ns-3 flows are all measured"}
	case f.PLPMTUMax > 0:
		return nil, &Unsupported{where, "pmtud", "ns-3 3.37 TCP keeps its segment size: give the datagram size instead"}
	}
	r := &record{kind: "flow"}
	r.set("id", f.ID)
	r.set("from", f.First)
	r.set("to", f.Last+1)
	rate := p.Access.Rate
	if rate <= 0 {
		rate = UnlimitedRate
	}
	r.set("arate", math.Round(rate))
	r.set("adelay", f.AccessDelay)
	r.set("start", f.Start)
	mss := transport.SegmentSize(cmp.Or(f.Datagram, transport.DefaultMaxDatagram))
	if err := ccRecord(r, where, f.CC, mss); err != nil {
		return nil, err
	}
	// ns-3 gives GetSsThresh the pipe; TcpCubic and TcpBbr ignore it.
	_, ccCfg, _ := ccalgo.Registry.Config(cmp.Or(f.CC, transport.DefaultCC))
	_, cubic := ccCfg.(*ccalgo.CubicConfig)
	_, bbr := ccCfg.(*ccalgo.BBRConfig)
	// TcpBbr controls cwnd itself (HasCongControl): ns-3 never calls its
	// recovery's DoRecovery, so the PRR bound does not matter there.
	if err := recoveryRecord(r, where, f.Recovery, !cubic && !bbr, !bbr); err != nil {
		return nil, err
	}
	socketRecord(r, f, mss)
	xf, err := transfers(p, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	r.set("xfer", xf)
	return r, nil
}

// socketRecord sets both ends' ns-3 socket attributes from the flow's
// transport settings (the transport's defaults where the plan has none).
func socketRecord(r *record, f *plan.Flow, mss int) {
	d := transport.DefaultConfig()
	minRTO := cmp.Or(int(f.MinRTO), int(d.MinRTO))
	ackEvery := cmp.Or(f.AckEvery, d.AckEvery)
	delAck := cmp.Or(int(f.DelayedAck), int(d.DelayedAck))
	if f.DelayedAck == transport.NoDelayedAck {
		delAck = 0
	}
	recvWin := cmp.Or(f.RecvWindow, d.RecvWindow)
	r.set("s.SegmentSize", mss)
	r.set("s.MinRto", strconv.Itoa(minRTO)+"ns")
	r.set("s.SndBufSize", max(recvWin, 1<<20))
	r.set("s.RcvBufSize", recvWin)
	r.set("s.WindowScaling", true)
	r.set("r.SegmentSize", mss)
	r.set("r.RcvBufSize", recvWin)
	r.set("r.DelAckCount", ackEvery)
	if delAck == 0 {
		r.set("r.DelAckCount", 1)
		delAck = 1 // ns-3 acknowledges at once with DelAckCount 1; the timer never runs
	}
	r.set("r.DelAckTimeout", strconv.Itoa(delAck)+"ns")
}

// ccRecord maps a cclab controller to its ns-3 counterpart, refusing
// parameters the counterpart does not have.
func ccRecord(r *record, where, cc string, mss int) error {
	if cc == "" {
		cc = transport.DefaultCC
	}
	e, cfg, err := ccalgo.Registry.Config(cc)
	if err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	un := func(what, why string) error { return &Unsupported{where, "cc " + cc + ": " + what, why} }
	base := func(b ccalgo.BaseConfig) {
		iw := b.IW
		if iw == 0 {
			iw = ccalgo.InitialWindow(mss) / mss
		}
		r.set("s.InitialCwnd", iw)
		if b.Ssthresh > 0 {
			r.set("s.InitialSlowStartThreshold", b.Ssthresh*mss)
		}
	}
	switch c := cfg.(type) {
	case *ccalgo.RenoConfig:
		switch {
		case c.CA == ccalgo.CAPerAck && c.ABC == 1:
			r.set("cc", "ns3::TcpNewReno")
			if c.Halve != ccalgo.HalveFlight {
				return un("halve="+c.Halve.String(), "ns-3.37 TcpNewReno::GetSsThresh halves the bytes in flight, not cwnd (set halve=flight with the recovery's flight=pipe)")
			}
		case c.CA == ccalgo.CAByteCounting && c.ABC == ccalgo.ABCLimit:
			r.set("cc", "ns3::TcpLinuxReno")
			if c.Halve != ccalgo.HalveCwnd {
				return un("halve="+c.Halve.String(), "ns-3.37 TcpLinuxReno::GetSsThresh halves cwnd, whatever is in flight (set halve=cwnd)")
			}
		default:
			return un(fmt.Sprintf("ca=%v with abc=%d", c.CA, c.ABC),
				"ns-3 has TcpNewReno (ca=acks,abc=1) and TcpLinuxReno (ca=bytes,abc=2,halve=cwnd)")
		}
		if c.Grow != ccalgo.GrowCum {
			return un("grow="+c.Grow.String(), "ns-3.37's TcpSocketBase::ProcessAck grows cwnd only on an ACK that moves the cumulative point, by the segments it moved over (set grow=cum)")
		}
		base(c.BaseConfig)
	case *ccalgo.CubicConfig:
		if !c.Linux {
			return un("linux=false", "ns-3's TcpCubic has Linux's arithmetic, not RFC 9438's (set linux=true)")
		}
		if c.Friendly {
			return un("friendly=true", "ns-3.37 TcpCubic has no Reno-friendly region (set friendly=false)")
		}
		if c.ABC != ccalgo.ABCLimit {
			return un("abc=1", "ns-3 TcpCubic's slow start counts every acknowledged segment")
		}
		if err := cubicNS3Rules(c, un); err != nil {
			return err
		}
		r.set("cc", "ns3::TcpCubic")
		r.set("cc.HyStart", c.HyStart)
		if c.HyStart { // ns-3's HyStart is tcp_cubic.c's; its delay clamp's maximum defaults to 1 s, Linux's is 16 ms
			r.set("cc.HyStartLowWindow", ccalgo.HyStartLowWindow)
			r.set("cc.HyStartMinSamples", ccalgo.HyStartMinSamples)
			r.set("cc.HyStartAckDelta", ccalgo.HyStartAckDelta)
			r.set("cc.HyStartDelayMin", ccalgo.HyStartDelayMin)
			r.set("cc.HyStartDelayMax", ccalgo.HyStartDelayMax)
		}
		r.set("cc.C", c.C)
		r.set("cc.Beta", c.Beta)
		r.set("cc.FastConvergence", c.FastConv)
		base(c.BaseConfig)
	case *ccalgo.VegasConfig:
		if c.FineGrained {
			return un("finegrained", "ns-3 TcpVegas has no fine-grained retransmission")
		}
		if c.Alpha != math.Trunc(c.Alpha) || c.Beta != math.Trunc(c.Beta) || c.Gamma != math.Trunc(c.Gamma) {
			return un("fractional alpha/beta/gamma", "ns-3 TcpVegas takes whole packets")
		}
		if !c.NS3 {
			return un("ns3=false", "ns-3.37's TcpVegas takes the smoothed RTT as every sample, grows per ACK in slow start, by TcpNewReno's step with few samples and after a timeout, and sets ssthresh to cwnd less one segment (set ns3=true; docs/compat.md)")
		}
		r.set("cc", "ns3::TcpVegas")
		r.set("cc.Alpha", int(c.Alpha))
		r.set("cc.Beta", int(c.Beta))
		r.set("cc.Gamma", int(c.Gamma))
		base(c.BaseConfig)
	case *ccalgo.BBRConfig:
		if c.Margin != 0 && c.Margin != 1 {
			return un("margin", "ns-3 TcpBbr has no pacing margin parameter")
		}
		if c.RTORestore {
			return un("rtorestore=true", "ns-3.37's TcpBbr does not restore cwnd after RTO recovery (set rtorestore=false)")
		}
		if !c.NS3Exit {
			return un("ns3exit=false", "ns-3.37 sets cwnd = ssthresh (TcpBbr's one-BDP InFlight(1)) at the end of fast recovery, not the saved cwnd (set ns3exit=true)")
		}
		if !c.NS3ProbeRTT {
			return un("ns3probertt=false", "ns-3.37's TcpBbr does not mark ProbeRTT's rate samples application-limited (set ns3probertt=true)")
		}
		r.set("cc", "ns3::TcpBbr")
		iw := c.IW
		if iw == 0 {
			iw = ccalgo.InitialWindow(mss) / mss
		}
		r.set("s.InitialCwnd", iw)
	default:
		return &Unsupported{where, "cc " + e.Name, "ns-3 models newreno, reno, cubic, vegas and bbr"}
	}
	return nil
}

// cubicNS3Rules refuses a CUBIC spec that lacks one of the rules of ns-3.37's
// TcpCubic and TcpSocketBase that cclab models as settings
// (ns3cmp.MatchedCubicCC, docs/compat.md), naming the setting to use.
func cubicNS3Rules(c *ccalgo.CubicConfig, un func(what, why string) error) error {
	switch {
	case c.SlowStart != ccalgo.SlowStartNS3:
		return un("ss="+cmp.Or(c.SlowStart, ccalgo.SlowStartRFC), "ns-3.37's TcpCubic::IncreaseWindow adds every segment the cumulative ACK moved over in slow start, with no per-ACK limit and past ssthresh (set ss=ns3)")
	case c.Acks != ccalgo.AcksNS3:
		return un("acks="+cmp.Or(c.Acks, ccalgo.AcksRFC), "ns-3.37's TcpSocketBase::ProcessAck grows cwnd by the segments the cumulative ACK moved over, none on an ACK with new SACK information outside CA_LOSS (set acks=ns3)")
	case c.CA != ccalgo.CANS3:
		return un("ca="+cmp.Or(c.CA, ccalgo.CALinux), "ns-3.37's TcpCubic::IncreaseWindow adds at most one segment per ACK and never clears its count m_cWndCnt (set ca=ns3)")
	case !c.RTOFlight:
		return un("rtoflight=false", "ns-3.37's TcpCubic::GetSsThresh takes 0.7 of the cwnd TcpPrrRecovery set when a timeout comes during recovery (set rtoflight)")
	case !c.RTOAlways:
		return un("rtoalways=false", "ns-3.37's TcpSocketBase::ReTxTimeout recomputes ssthresh at every timeout, repeats included (set rtoalways)")
	}
	return nil
}

// recoveryRecord maps the loss-recovery strategy: newreno (no SACK), sack
// (RFC 6675 with ns-3's classic recovery) and prr (RFC 6937), and
// dupthresh. pipeMatters: the controller's ssthresh depends on the flight it
// is given, so only flight=pipe (what ns-3 gives) can be expressed.
// boundMatters: ns-3's PRR sets cwnd, so only bound=ns3 (ns-3's own SSRB
// variant) or crb can be expressed. ns-3 retransmits on partial ACKs in
// every SACK recovery, so partialrxt is required; without SACK it enters a new
// recovery at exactly one past recover, so newreno needs atrecover.
func recoveryRecord(r *record, where, rec string, pipeMatters, boundMatters bool) error {
	if rec == "" {
		rec = transport.DefaultRecovery
	}
	e, cfg, err := transport.Recoveries.Config(rec)
	if err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	un := func(what, why string) error { return &Unsupported{where, "recovery " + rec + ": " + what, why} }
	var sc *transport.SACKConfig
	bound := "" // a PRR bound ns-3 cannot express, if any
	switch e.Name {
	case "newreno":
		c := cfg.(*transport.NewRenoConfig)
		if !c.AtRecover {
			return un("without atrecover", "ns-3.37 starts a new recovery on duplicate ACKs at exactly one past recover (set atrecover: TcpSocketBase::DupAck)")
		}
		if c.NoLT {
			return un("nolt", "cclab does not map it onto ns-3's TcpSocketBase LimitedTransmit attribute")
		}
		r.set("rec", "ns3::TcpClassicRecovery")
		r.set("s.Sack", false)
		r.set("r.Sack", false)
		r.set("s.ReTxThreshold", c.DupThresh)
		return nil
	case "sack":
		sc = cfg.(*transport.SACKConfig)
		r.set("rec", "ns3::TcpClassicRecovery")
	case "prr":
		c := cfg.(*transport.PRRConfig)
		sc = &c.SACKConfig
		r.set("rec", "ns3::TcpPrrRecovery")
		switch c.Bound {
		case "crb":
			r.set("rec.ReductionBound", "CRB")
		case "ns3": // cclab's model of ns-3's own SSRB variant
			r.set("rec.ReductionBound", "SSRB")
		default:
			if boundMatters {
				bound = c.Bound
			}
			r.set("rec.ReductionBound", "SSRB")
		}
	default:
		return &Unsupported{where, "recovery " + e.Name, "ns-3.37 has classic (newreno, sack) and PRR recovery only"}
	}
	switch {
	case sc.LostRetx:
		return un("lostretx", "ns-3.37 does not detect lost retransmissions")
	case sc.Adaptive:
		return un("adaptive", "ns-3.37 keeps a fixed ReTxThreshold")
	case sc.Undo:
		return un("undo", "ns-3.37 does not undo spurious reductions")
	case sc.RACK:
		return un("rack", "ns-3.37 has no RACK-TLP")
	case sc.FRTO:
		return un("frto", "ns-3.37 has no F-RTO")
	case pipeMatters && sc.Flight != transport.FlightPipe:
		return un("flight=flightsize", "ns-3.37 takes ssthresh from the pipe on entering recovery (set flight=pipe)")
	case !sc.PartialRxt:
		return un("without partialrxt", "ns-3.37 retransmits on every partial ACK in SACK recovery (set partialrxt: TcpSocketBase::ProcessAck)")
	case bound != "":
		return un("bound="+bound, "ns-3.37's SSRB differs from RFC 6937's (set bound=ns3: TcpPrrRecovery::DoRecovery)")
	}
	r.set("s.Sack", true)
	r.set("r.Sack", true)
	r.set("s.ReTxThreshold", sc.DupThresh)
	return nil
}

// transfers draws the flow's application transfers from its own random
// stream, as the simulator's generator would: "idle/duration/bytes" items,
// duration -1 for none, bytes 0 for unlimited.
func transfers(p *plan.Plan, f *plan.Flow) (string, error) {
	tr := f.Traffic
	if tr == "" {
		tr = "greedy"
	}
	name, _, err := spec.Split(tr)
	if err != nil {
		return "", err
	}
	if name != "greedy" && name != "onoff" {
		return "", &Unsupported{fmt.Sprintf("flow %d", f.ID), "traffic " + name, "the ns-3 backend runs greedy and onoff TCP sources"}
	}
	gen, err := traffic.New(tr, traffic.Env{Rand: p.Rand(f.TrafficStream), MSS: f.Datagram})
	if err != nil {
		return "", err
	}
	g, ok := gen.(traffic.StreamGen)
	if !ok {
		return "", fmt.Errorf("traffic %s: not a stream generator", name)
	}
	var items []string
	var at time.Duration
	for len(items) < maxTransfers && at <= p.Duration {
		t, ok := g.NextTransfer(0)
		if !ok {
			break
		}
		dur := -1.0
		if t.Duration > 0 {
			dur = t.Duration.Seconds()
		}
		if t.Bytes == 0 && t.Duration == 0 && len(items) > 0 {
			break
		}
		items = append(items, fmt.Sprintf("%g/%g/%d", t.Idle.Seconds(), dur, t.Bytes))
		at += t.Idle + t.Duration
		if t.Bytes == 0 && t.Duration == 0 {
			break // unlimited: the last transfer
		}
	}
	return strings.Join(items, ","), nil
}
