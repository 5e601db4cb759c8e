package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cclab/perf"
)

// CauseAgentRefused is an agent's refusal of a request (a cap, busy, a
// spec it does not accept): the transfer never ran.
const CauseAgentRefused = "agent_refused"

// SenderOutcome fills an Outcome from the sender's summary (as `sender
// -J`) and the receiver's JSON. A summary with an error, or whose stream
// the receiver did not verify, is a transfer_error. Data packets sent are
// the segments of the bytes sent (ceil(sender_bytes / mss)) plus the
// retransmissions: the summary carries no packet count. Unnecessary
// retransmissions are the summary's spurious_retransmits (found by
// timestamps, RFC 3522).
func SenderOutcome(start time.Time, sender *perf.Result, receiver []byte) (*Outcome, error) {
	if sender == nil {
		return nil, &Failure{CauseTransfer, errors.New("no sender summary")}
	}
	e := sender.End
	if e.Error != "" {
		return nil, &Failure{CauseTransfer, fmt.Errorf("sender: %s", e.Error)}
	}
	if !e.Verified {
		return nil, &Failure{CauseTransfer, fmt.Errorf("the receiver's digest %s or byte count does not match the sender's %s", e.ReceiverDigest, e.SenderDigest)}
	}
	js, err := json.Marshal(sender)
	if err != nil {
		return nil, err
	}
	o := &Outcome{Start: start, Seconds: e.Seconds, Bytes: e.Bytes, GoodputBps: e.ThroughputBps, Retransmits: e.Retransmits,
		Unnecessary: e.Spurious, RTOs: e.RTOs, RTOCauses: e.RTOCauses, PacketsSent: -1, MinRTTms: e.MinRTTms, MeanSRTTms: e.MeanSRTTms,
		SenderJSON: js, ReceiverJSON: receiver}
	if e.MSS > 0 {
		o.PacketsSent = (e.SenderBytes+int64(e.MSS)-1)/int64(e.MSS) + e.Retransmits
	}
	if t, err := time.Parse(time.RFC3339, sender.Start.Timestamp); err == nil {
		o.Start = t
	}
	return o, nil
}
