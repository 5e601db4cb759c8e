package report

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/scenario"
	"cclab/transport"
)

// TCP throughput models drawn as references on the report's
// utilization-against-loss plots (docs/eval.md, "Model curves").

// MathisThroughput returns the steady-state throughput, bytes/s, of a TCP
// Reno flow in congestion avoidance losing a fraction p of its packets
// (Mathis, Semke, Mahdavi and Ott, "The Macroscopic Behavior of the TCP
// Congestion Avoidance Algorithm", ACM CCR 27(3), 1997, eq. 3):
//
//	B = (MSS / RTT) · C / √p,  C = √(3 / (2b)),
//
// mss in bytes, rtt in seconds, b the packets acknowledged per ACK (C =
// √(3/2) ≈ 1.22 with an ACK per packet, √(3/4) ≈ 0.87 with delayed ACKs,
// b = 2). It ignores timeouts and the window limit; +Inf for p = 0.
func MathisThroughput(mss, rtt, p float64, b int) float64 {
	c := math.Sqrt(3 / (2 * float64(b)))
	return mss / rtt * c / math.Sqrt(p)
}

// PFTKThroughput returns the throughput, bytes/s, of a TCP Reno flow with
// loss probability p from the model of Padhye, Firoiu, Towsley and Kurose
// ("Modeling TCP Throughput: A Simple Model and its Empirical Validation",
// SIGCOMM 1998, eq. 31), which adds retransmission timeouts and the
// receiver's window to Mathis et al.'s model:
//
//	B = min( Wmax/RTT, 1 / (RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²)) )  packets/s,
//
// times mss; rtt and t0 (the retransmission timeout) in seconds, wmax in
// packets, b the packets acknowledged per ACK.
func PFTKThroughput(mss, rtt, t0, p, wmax float64, b int) float64 {
	bb := float64(b)
	den := rtt*math.Sqrt(2*bb*p/3) + t0*math.Min(1, 3*math.Sqrt(3*bb*p/8))*p*(1+32*p*p)
	return mss * math.Min(wmax/rtt, 1/den)
}

// streamHeaderBytes is the largest stream-mode short header without an ACK
// section: the MSS is the datagram size minus it (docs/wire.md).
const streamHeaderBytes = 35

// modelParams are a scenario's inputs to the throughput models.
type modelParams struct {
	MSS    float64 // bytes: the flow's largest datagram minus the stream header
	RTT    float64 // s: the path's round-trip propagation delay
	T0     float64 // s: the RTO, max(the transport's minimum RTO, 3·RTT: RFC 6298 §2.2 after one sample)
	Wmax   float64 // packets: the receive window over the MSS
	B      int     // Mathis et al.'s b: packets acknowledged per window increment unit (modelB)
	PerAck bool    // congestion avoidance grows per ACK (ca=acks), not by byte counting
	Rate   float64 // bits/s: the bottleneck rate (utilization = throughput / rate)
}

// modelFor returns the model inputs of a scenario with one long-running
// flow whose loss probability is swept on a dumbbell's or chain's hops;
// ok is false when the models do not describe it (several flows, raw UDP,
// no rate).
func modelFor(s *scenario.Scenario) (modelParams, bool) {
	if s == nil || len(s.Flows) != 1 || s.Flows[0].Count != 1 || s.Flows[0].Mode == scenario.ModeUDP || len(s.Topology.Hops) == 0 {
		return modelParams{}, false
	}
	f := s.Flows[0]
	dg := f.Datagram
	if dg == 0 {
		dg = transport.DefaultMaxDatagram
	}
	one := s.Topology.Access.Delay
	rate := math.Inf(1)
	for _, h := range s.Topology.Hops {
		one += h.Delay
		rate = math.Min(rate, h.Rate)
	}
	rtt := 2 * one.Seconds()
	if rtt <= 0 || math.IsInf(rate, 1) {
		return modelParams{}, false
	}
	mss := float64(dg - streamHeaderBytes)
	t0 := math.Max(transport.DefaultMinRTO.Seconds(), 3*rtt)
	b, perAck := modelB(f)
	return modelParams{MSS: mss, RTT: rtt, T0: t0, Wmax: transport.DefaultRecvWindow / mss, B: b, PerAck: perAck, Rate: rate}, true
}

// modelB returns b of the Mathis and PFTK models for flow f, from its actual
// ACK and growth settings. The models' b is the number of packets per ACK
// because Reno grows cwnd by 1/cwnd per ACK (RFC 5681 §3.1 eq. (3)): with
// an ACK per b packets it grows by one packet every b RTTs. A controller that
// counts bytes (RFC 3465 §2.1, cclab's default ca=bytes) grows by one SMSS per
// cwnd of acknowledged bytes whatever the ACK pattern, so b = 1; with per-ACK
// growth (ca=acks) b is the receiver's ACK ratio: ack_every (default 2), or
// 1 with delayed ACKs off (delayed_ack: 0s).
func modelB(f scenario.Flow) (b int, perAck bool) {
	if !perAckGrowth(f.CC) {
		return 1, false
	}
	switch {
	case f.DelayedAck == transport.NoDelayedAck:
		return 1, true
	case f.AckEvery > 0:
		return f.AckEvery, true
	}
	return transport.DefaultAckEvery, true
}

// perAckGrowth reports whether the controller spec cc grows cwnd per ACK in
// congestion avoidance (a config field CA set to ccalgo.CAPerAck).
func perAckGrowth(cc string) bool {
	_, cfg, err := ccalgo.Registry.Config(cc)
	if err != nil {
		return false
	}
	v := reflect.Indirect(reflect.ValueOf(cfg))
	if v.Kind() != reflect.Struct {
		return false
	}
	ca := v.FieldByName("CA")
	return ca.IsValid() && ca.Type() == reflect.TypeOf(ccalgo.CAPerAck) && ccalgo.CAGrowth(ca.Uint()) == ccalgo.CAPerAck
}

// Utilizations returns the two models' bandwidth utilization at loss p:
// throughput ×8 / the bottleneck rate, capped at 1 (the models know no
// capacity).
func (m modelParams) Utilizations(p float64) (mathis, pftk float64) {
	cap1 := func(bytesPerSec float64) float64 { return math.Min(1, bytesPerSec*8/m.Rate) }
	return cap1(MathisThroughput(m.MSS, m.RTT, p, m.B)), cap1(PFTKThroughput(m.MSS, m.RTT, m.T0, p, m.Wmax, m.B))
}

// describe says which inputs the curves use, for the figure's caption.
func (m modelParams) describe() string {
	return "MSS " + strconv.Itoa(int(m.MSS)) + " B, RTT " + fmtMS(m.RTT) + ", T0 " + fmtMS(m.T0) +
		", b = " + strconv.Itoa(m.B) + m.growth() + ", Wmax " + strconv.Itoa(int(m.Wmax)) + " packets, bottleneck " +
		strings.TrimSuffix(strconv.FormatFloat(m.Rate/1e6, 'f', 3, 64), "0") + " Mbit/s"
}

// growth says where b comes from, for the caption.
func (m modelParams) growth() string {
	if !m.PerAck {
		return " (byte counting: one SMSS per cwnd acknowledged, whatever the ACKs)"
	}
	return " (growth per ACK, an ACK per " + strconv.Itoa(m.B) + " packets)"
}

func fmtMS(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Microsecond).String()
}

// isLossAxis reports whether an axis sweeps a plain loss probability (the
// models' p).
func isLossAxis(a scenario.Axis) bool {
	if !strings.HasSuffix(a.Path, ".loss") && a.Path != "loss" {
		return false
	}
	for _, v := range a.Values {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 0 || p > 1 {
			return false
		}
	}
	return true
}
