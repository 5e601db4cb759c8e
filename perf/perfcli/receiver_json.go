package perfcli

import (
	"encoding/json"
	"io"
	"time"

	"cclab/internal/buildinfo"
	"cclab/perf"
)

// maxPendingTests bounds the several-flow tests whose flows -J holds until
// their last flow (perf drops its own account of tests past as many).
const maxPendingTests = 1024

// receiverJSON writes -J's output: one iperf3-schema document per test, as
// iperf3 -s -J does; a sender's -P/--bidir test is written once its last
// flow is in. Its methods are called under the output lock.
type receiverJSON struct {
	enc     *json.Encoder
	pending map[string][]perf.FlowSummary // flows of unfinished tests, by test ID
	host    func() perf.Host
}

func newReceiverJSON(w io.Writer) *receiverJSON {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return &receiverJSON{enc: enc, pending: map[string][]perf.FlowSummary{},
		host: func() perf.Host {
			return perf.Host{Version: "cclab " + buildinfo.Short(), SystemInfo: buildinfo.Read().System()}
		}}
}

// flow takes a finished flow: a test of its own is written at once.
func (j *receiverJSON) flow(s perf.FlowSummary) {
	if s.Flows < 2 {
		_ = j.enc.Encode(perf.ToIperf3Receiver([]perf.FlowSummary{s}, nil, j.host(), time.Now()))
		return
	}
	if _, ok := j.pending[s.Test]; !ok && len(j.pending) >= maxPendingTests {
		clear(j.pending)
	}
	j.pending[s.Test] = append(j.pending[s.Test], s)
}

// test writes a several-flow test once its last flow is in.
func (j *receiverJSON) test(t perf.TestSummary) {
	flows := j.pending[t.Test]
	delete(j.pending, t.Test)
	_ = j.enc.Encode(perf.ToIperf3Receiver(flows, &t, j.host(), time.Now()))
}
