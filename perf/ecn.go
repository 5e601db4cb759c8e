package perf

import (
	"cclab/ecn"
	"cclab/transport"
)

// ECNResult is a transfer's ECN account (RFC 3168), in End.ECN and, for the
// reporting side's half, in Report.ECN and FlowSummary.ECN.
type ECNResult struct {
	Requested  bool   `json:"requested"`  // the sender asked for ECN (-ecn)
	Negotiated bool   `json:"negotiated"` // both ends agreed in the handshake
	Validated  bool   `json:"validated"`  // the path carried the ECN field: see validateECN
	Codepoint  string `json:"codepoint"`  // what new data packets were sent with: "ECT(0)" or "Not-ECT"
	ECTSent    int64  `json:"ect0_sent"`  // data packets sent ECT(0), packets (retransmissions are Not-ECT)
	ECTRecv    int64  `json:"ect_received"`
	CERecv     int64  `json:"ce_received"` // data packets that arrived CE-marked at the receiver, packets
	ECEAcks    int64  `json:"ece_acks"`    // ACKs with ECN-Echo received by the sender
	Reductions int64  `json:"reductions"`  // window reductions for ECN (at most one per RTT, RFC 3168 §6.1.2)
}

// ecnSending fills the sending side's half of an ECN account from its
// connection's counters.
func ecnSending(s transport.ConnStats, r *ECNResult) {
	r.Negotiated = s.ECN
	r.Codepoint = ecn.NotECT.String()
	if s.ECN {
		r.Codepoint = ecn.ECT0.String()
	}
	r.ECTSent, r.ECEAcks, r.Reductions = int64(s.ECTSent), int64(s.ECEReceived), int64(s.ECNReductions)
}

// ecnReceiving fills the receiving side's half.
func ecnReceiving(s transport.ConnStats, r *ECNResult) {
	r.ECTRecv, r.CERecv = int64(s.ECTReceived), int64(s.CEReceived)
}

// validateECN sets r.Validated once both halves are in: ECN was negotiated,
// ECN-capable packets reached the receiver with their field intact (some
// arrived ECT or CE, so the path neither bleaches nor drops ECT), and no more
// arrived ECN-capable than were sent so (the path does not remark Not-ECT as
// ECT), in the spirit of QUIC's ECN validation (RFC 9000 §13.4.2).
func validateECN(r *ECNResult) {
	got := r.ECTRecv + r.CERecv
	r.Validated = r.Negotiated && got > 0 && got <= r.ECTSent
}
