package metrics

// Scope says what a metric describes.
type Scope string

// Metric scopes.
const (
	ScopeFlow    Scope = "flow"    // one flow (connection)
	ScopeLink    Scope = "link"    // one link (hop direction) and its queue
	ScopeNetwork Scope = "network" // the whole run
)

// MetricDef describes one metric: its name (ccperf style: mean_x, var_x,
// cov_x, agg_x, total_x), unit and meaning. docs/metrics.md lists every
// entry of Catalog; a test keeps the two in step.
type MetricDef struct {
	Name  string
	Scope Scope
	Unit  string
	Doc   string
}

// Catalog lists every summary metric the harness computes.
var Catalog = []MetricDef{
	// Per flow.
	{"mean_throughput", ScopeFlow, "bit/s", "goodput at the receiver: bytes delivered in order (Delivered) ×8 / active time"},
	{"var_throughput", ScopeFlow, "(bit/s)^2", "variance of the per-interval throughput time series"},
	{"cov_throughput", ScopeFlow, "1", "coefficient of variation (sd/mean) of the per-interval throughput"},
	{"mean_send_rate", ScopeFlow, "bit/s", "sending rate: bytes of data packets sent (PacketSent, including retransmissions) ×8 / active time"},
	{"mean_delivery_rate", ScopeFlow, "bit/s", "delivery rate at the sender: bytes newly acknowledged (PacketAcked, cumulatively or by SACK) ×8 / active time"},
	{"total_delivered", ScopeFlow, "byte", "bytes delivered in order to the receiving application"},
	{"total_sent", ScopeFlow, "byte", "bytes of data packets sent, including retransmissions"},
	{"total_packets_sent", ScopeFlow, "packet", "data packets sent, including retransmissions"},
	{"mean_cwnd", ScopeFlow, "byte", "time-weighted mean congestion window (MetricsUpdated)"},
	{"var_cwnd", ScopeFlow, "byte^2", "time-weighted variance of the congestion window"},
	{"cov_cwnd", ScopeFlow, "1", "coefficient of variation of the congestion window"},
	{"mean_inflight", ScopeFlow, "byte", "time-weighted mean bytes in flight (MetricsUpdated)"},
	{"mean_srtt", ScopeFlow, "s", "time-weighted mean smoothed RTT (the sender's srtt after each MetricsUpdated holds until the next)"},
	{"var_srtt", ScopeFlow, "s^2", "time-weighted variance of the smoothed RTT"},
	{"cov_srtt", ScopeFlow, "1", "coefficient of variation of the smoothed RTT"},
	{"min_rtt", ScopeFlow, "s", "minimum RTT seen by the flow (smallest MinRTT of its MetricsUpdated events, the warm-up included)"},
	{"mean_qdelay_est", ScopeFlow, "s", "the sender's estimate of the queueing delay it sees: mean_srtt − min_rtt"},
	{"p50_rtt", ScopeFlow, "s", "median of the RTT samples (latest RTT of each MetricsUpdated, i.e. per ACK processed); DDSketch, within 0.5 %"},
	{"p95_rtt", ScopeFlow, "s", "95th percentile of the RTT samples (as p50_rtt)"},
	{"p99_rtt", ScopeFlow, "s", "99th percentile of the RTT samples (as p50_rtt)"},
	{"total_lost", ScopeFlow, "packet", "packets declared lost by the sender's loss recovery (PacketLost; an RTO declares its whole window)"},
	{"declared_loss_rate", ScopeFlow, "1", "total_lost / total_packets_sent: losses as the sender saw them"},
	{"total_link_drops", ScopeFlow, "packet", "packets of this flow dropped in the network: Drop events at the plan's hops carrying the flow (loss stage or queue)"},
	{"loss_rate", ScopeFlow, "1", "network loss rate: total_link_drops / total_packets_sent"},
	{"total_retransmissions", ScopeFlow, "packet", "retransmitted packets (Retransmit events, or PacketSent with the retransmission flag if more)"},
	{"total_spurious_retransmissions", ScopeFlow, "packet", "retransmissions later found unnecessary (SpuriousRetransmit)"},
	{"total_rtos", ScopeFlow, "1", "retransmission timeouts (RTO events); total_rtos_<cause> split them by cause"},
	{"total_recoveries", ScopeFlow, "1", "loss-recovery episodes (RecoveryStart)"},
	{"mean_recovery_time", ScopeFlow, "s", "mean duration of the recovery episodes that ended (RecoveryStart → RecoveryEnd)"},
	{"total_congestion_signals", ScopeFlow, "1", "ECN-Echo or delay-based window reductions (CongestionSignal)"},
	{"total_delay_reductions", ScopeFlow, "1", "delay-based window reductions: CongestionSignal with Reason delay (a DCA reaction)"},
	{"fct", ScopeFlow, "s", "flow completion time: first PacketSent → last Delivered, for a sized flow that delivered all its bytes; absent otherwise"},
	{"bw_utilization", ScopeFlow, "1", "mean_throughput / bottleneck rate"},
	{"bdp_utilization", ScopeFlow, "1", "mean_inflight / BDP, BDP = bottleneck rate × base RTT / 8"},
	{"power", ScopeFlow, "bit/s^2", "network power: mean_throughput / mean_srtt"},

	// Per link.
	{"mean_queue_len", ScopeLink, "packet", "time-weighted mean queue length (QueueLen after Enqueue, Dequeue, Drop, Mark)"},
	{"var_queue_len", ScopeLink, "packet^2", "time-weighted variance of the queue length"},
	{"cov_queue_len", ScopeLink, "1", "coefficient of variation of the queue length"},
	{"max_queue_len", ScopeLink, "packet", "largest queue length seen"},
	{"mean_queue_bytes", ScopeLink, "byte", "time-weighted mean queue length in bytes"},
	{"mean_queue_delay", ScopeLink, "s", "mean sojourn time of dequeued packets (Dequeue.Sojourn)"},
	{"var_queue_delay", ScopeLink, "s^2", "variance of the sojourn times"},
	{"cov_queue_delay", ScopeLink, "1", "coefficient of variation of the sojourn times"},
	{"p50_queue_delay", ScopeLink, "s", "median sojourn time of dequeued packets; DDSketch, within 0.5 %"},
	{"p95_queue_delay", ScopeLink, "s", "95th percentile of the sojourn times (as p50_queue_delay)"},
	{"p99_queue_delay", ScopeLink, "s", "99th percentile of the sojourn times (as p50_queue_delay)"},
	{"total_enqueued", ScopeLink, "packet", "packets accepted by the queue (Enqueue)"},
	{"total_drops", ScopeLink, "packet", "packets dropped by the link (loss stage or queue); total_drops_<reason> split them by qdisc.DropReason"},
	{"total_marks", ScopeLink, "packet", "packets CE-marked by the queue (Mark)"},
	{"drop_rate", ScopeLink, "1", "total_drops / (total_enqueued + total_drops)"},
	{"total_departed", ScopeLink, "byte", "bytes that left the link (Departure)"},
	{"utilization", ScopeLink, "1", "total_departed ×8 / (link rate × run duration)"},
	{"total_queue_oscillations", ScopeLink, "1", "queue oscillations, counted as congestion epochs: an epoch starts when the queue length rises above θ = threshold × limit and ends when it falls back to θ/2 or below (threshold: the scenario's epoch_threshold, default 0.5; limit: the configured packet limit, else the largest length seen)"},
	{"total_loss_events", ScopeLink, "1", "loss events: groups of queue drops and marks in which each follows the previous by at most one base RTT (RFC 5348 §5.2)"},

	// Per network.
	{"agg_throughput", ScopeNetwork, "bit/s", "sum of the flows' mean_throughput"},
	{"agg_send_rate", ScopeNetwork, "bit/s", "sum of the flows' mean_send_rate"},
	{"jain_fairness", ScopeNetwork, "1", "Jain's fairness index of the flows' mean_throughput: (Σx)² / (n Σx²)"},
	{"bw_utilization", ScopeNetwork, "1", "agg_throughput / bottleneck rate"},
	{"mean_srtt", ScopeNetwork, "s", "mean of the flows' mean_srtt"},
	{"power", ScopeNetwork, "bit/s^2", "agg_throughput / mean_srtt"},
	{"total_retransmissions", ScopeNetwork, "packet", "sum over flows"},
	{"total_rtos", ScopeNetwork, "1", "sum over flows"},
	{"total_lost", ScopeNetwork, "packet", "sum over flows"},
	{"total_link_drops", ScopeNetwork, "packet", "sum over flows (drops of the flows' packets; total_drops also counts cross traffic and ACKs)"},
	{"loss_rate", ScopeNetwork, "1", "Σ total_link_drops / Σ total_packets_sent"},
	{"declared_loss_rate", ScopeNetwork, "1", "Σ total_lost / Σ total_packets_sent"},
	{"total_drops", ScopeNetwork, "packet", "sum over links"},
	{"total_marks", ScopeNetwork, "packet", "sum over links"},
	{"utilization", ScopeNetwork, "1", "utilization of the bottleneck link"},
	{"mean_queue_delay", ScopeNetwork, "s", "mean_queue_delay of the bottleneck link"},
	{"mean_queue_len", ScopeNetwork, "packet", "mean_queue_len of the bottleneck link"},
	{"p50_rtt", ScopeNetwork, "s", "median of every flow's RTT samples pooled"},
	{"p95_rtt", ScopeNetwork, "s", "95th percentile of every flow's RTT samples pooled (the delay axis of the report's throughput–delay plot)"},
	{"p99_rtt", ScopeNetwork, "s", "99th percentile of every flow's RTT samples pooled"},
	{"p50_queue_delay", ScopeNetwork, "s", "p50_queue_delay of the bottleneck link"},
	{"p95_queue_delay", ScopeNetwork, "s", "p95_queue_delay of the bottleneck link"},
	{"p99_queue_delay", ScopeNetwork, "s", "p99_queue_delay of the bottleneck link"},
}

// SeriesDef describes one time series, sampled at the run's metric interval.
type SeriesDef struct {
	Name  string
	Scope Scope
	Unit  string
	Doc   string
}

// seriesCatalog lists the time series the harness computes. Each point covers
// [t, t+interval); its time is the interval's start, seconds from run start.
var seriesCatalog = []SeriesDef{
	{"throughput", ScopeFlow, "bit/s", "bytes delivered in the interval ×8 / interval"},
	{"send_rate", ScopeFlow, "bit/s", "bytes sent in the interval ×8 / interval"},
	{"delivery_rate", ScopeFlow, "bit/s", "bytes newly acknowledged in the interval ×8 / interval"},
	{"cwnd", ScopeFlow, "byte", "time-weighted mean congestion window in the interval"},
	{"inflight", ScopeFlow, "byte", "time-weighted mean bytes in flight in the interval"},
	{"srtt", ScopeFlow, "s", "time-weighted mean smoothed RTT in the interval"},
	{"losses", ScopeFlow, "packet", "packets declared lost in the interval"},
	{"retransmissions", ScopeFlow, "packet", "retransmissions in the interval"},
	{"rtos", ScopeFlow, "1", "retransmission timeouts in the interval"},
	{"queue_len", ScopeLink, "packet", "time-weighted mean queue length in the interval"},
	{"queue_delay", ScopeLink, "s", "mean sojourn of packets dequeued in the interval (absent if none)"},
	{"drops", ScopeLink, "packet", "drops in the interval"},
	{"utilization", ScopeLink, "1", "bytes departed in the interval ×8 / (rate × interval)"},
}

// UnitOf returns the unit of the named metric in scope s. Metrics split by a
// reason (total_drops_overflow, total_rtos_<cause>) take their base's unit.
func UnitOf(s Scope, name string) string {
	for _, d := range Catalog {
		if d.Scope == s && d.Name == name {
			return d.Unit
		}
	}
	best := ""
	unit := ""
	for _, d := range Catalog {
		if d.Scope == s && len(name) > len(d.Name) && name[:len(d.Name)+1] == d.Name+"_" && len(d.Name) > len(best) {
			best, unit = d.Name, d.Unit
		}
	}
	return unit
}
