package studies

import (
	"math"
	"strconv"
	"strings"
	"time"

	"cclab/metrics"
	"cclab/report"
)

// The dccp-tcp study's report section (docs/studies/dccp-tcp.md): the
// tables of the SAINT 2005 evaluation of DCCP CCID2, each with CCID3 as
// well. Flow numbers follow experiments/dccp-tcp.yaml: in udp-vs-dccp the
// TCP flows are 1-2 and the real-time flows 3-4; elsewhere TCP (or the Ack
// Ratio 1 flow) is 1 and DCCP (the Ack Ratio 2 flow) is 2.
func dccpTCPReport(d *report.ReportData) (string, []report.Table, []report.Figure, error) {
	const dccp, tcpVariant = "flows[1].cc", "flows[0].recovery"
	pair := []studyColumn{flowCol("TCP throughput", 1), flowCol("DCCP throughput", 2), shareCol("DCCP share", 2),
		netCol("utilization", "bw_utilization")}
	specs := []caseTableSpec{
		{Case: "udp-vs-dccp", Title: "DCCP vs UDP: stationary throughput of each flow",
			Caption: "Two real-time flows (each offering 5 Mbit/s: uncontrolled UDP, CCID2 or CCID3) join two TCP SACK flows at 5 s; " +
				"α = 20 ms, β = 5 ms, γ = 10 ms, b = 40 packets; throughput over the last 55 s.",
			Params: []studyParam{{"flows[1].cc", "real-time flows"}},
			Cols: []studyColumn{flowCol("real-time 1", 3), flowCol("real-time 2", 4), flowCol("TCP 1", 1), flowCol("TCP 2", 2),
				netCol("utilization", "bw_utilization")}},
		{Case: "tcp-first", Title: "Start order: TCP first (DCCP from 5 s)",
			Caption: "One TCP flow (Reno, NewReno or SACK recovery) and one bulk DCCP flow; α = β = 3 ms, γ = 10 ms, b = 20 packets; " +
				"stationary throughput and shares over the last 55 s (throughput over time: the time series below).",
			Params: []studyParam{{tcpVariant, "TCP"}, {dccp, "DCCP"}}, Cols: pair},
		{Case: "dccp-first", Title: "Start order: DCCP first (TCP from 5 s)",
			Caption: "As above with the DCCP flow first.",
			Params:  []studyParam{{tcpVariant, "TCP"}, {dccp, "DCCP"}}, Cols: pair},
		{Case: "ack-ratio", Title: "Two CCID2 flows: Ack Ratio 1 vs Ack Ratio 2",
			Caption: "Flow 1 acknowledges every packet, flow 2 every second (fixed Ack Ratios), flow 2 from 5 s; α = β = 3 ms, γ = 10 ms, b = 20: " +
				"throughput of each, and the second flow's losses and timeouts.",
			Cols: []studyColumn{flowCol("Ack Ratio 1", 1), flowCol("Ack Ratio 2", 2),
				{Head: "AR 2: packets lost", Scope: metrics.ScopeFlow, ID: 2, Metric: "total_lost"},
				{Head: "AR 2: timeouts", Scope: metrics.ScopeFlow, ID: 2, Metric: "total_rtos"},
				netCol("utilization", "bw_utilization")}},
		{Case: "delay", Title: "Throughput vs propagation delay γ (b = 20 packets)",
			Caption: "One TCP SACK flow and one bulk DCCP flow (from 5 s), α = β = 3 ms.",
			Params:  []studyParam{{"topology.bottleneck.delay", "γ"}, {dccp, "DCCP"}}, Cols: pair},
		{Case: "buffer", Title: "Throughput vs buffer b (γ = 10 ms)",
			Caption: "One TCP SACK flow and one bulk DCCP flow (from 5 s), α = β = 3 ms: fairness against the buffer size.",
			Params:  []studyParam{{"topology.bottleneck.queue", "b"}, {dccp, "DCCP"}}, Cols: pair},
	}
	var figs []report.Figure
	for _, fs := range []struct {
		c, axis, title, xlabel string
		x                      func(string) float64
	}{
		{"delay", "topology.bottleneck.delay", "Throughput vs propagation delay γ", "γ (ms)", func(v string) float64 {
			dur, err := time.ParseDuration(v)
			if err != nil {
				return math.NaN()
			}
			return float64(dur) / 1e6
		}},
		{"buffer", "topology.bottleneck.queue", "Throughput vs buffer b", "b (packets)", func(v string) float64 {
			_, lim, _ := strings.Cut(v, ":")
			n, err := strconv.ParseFloat(strings.TrimSuffix(lim, "p"), 64)
			if err != nil {
				return math.NaN()
			}
			return n
		}},
	} {
		for _, be := range d.Backends {
			x := func(g *report.Group) float64 { return fs.x(g.Param(fs.axis)) }
			tput := func(id int64) func(*report.Group) float64 {
				return func(g *report.Group) float64 { return meanOf(g, metrics.ScopeFlow, id, "mean_throughput") / 1e6 }
			}
			lines := append(caseLines(d, fs.c, be, func(g *report.Group) string { return "TCP next to " + g.Param(dccp) }, x, tput(1)),
				caseLines(d, fs.c, be, func(g *report.Group) string { return g.Param(dccp) }, x, tput(2))...)
			f, ok, err := studyLineFigure(fs.title+" ("+be+")", "Mean throughput over the seeds of the TCP SACK flow and the DCCP flow "+
				"(CCID2 or CCID3) sharing the 10 Mbit/s bottleneck.", fs.xlabel, "throughput (Mbit/s)", lines)
			if err != nil {
				return "", nil, nil, err
			}
			if ok {
				figs = append(figs, f)
			}
		}
	}
	traces, err := d.TraceFigures("ack-ratio", "Sequence-number trace of the Ack Ratio 2 flow, 5–15 s",
		"Every packet the second CCID2 flow (Ack Ratio 2, from 5 s) sent between 5 and 15 s at its DCCP sequence number, "+
			"the packets its sender declared lost (Ack Vector: three later packets acknowledged) and its retransmission timeouts "+
			"(the scenario's trace key; first seed).")
	if err != nil {
		return "", nil, nil, err
	}
	figs = append(traces, figs...)
	return "The DCCP-vs-TCP study (SAINT 2005, with CCID3; docs/studies/dccp-tcp.md)", caseTables(d, specs), figs, nil
}
