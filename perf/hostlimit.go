package perf

import (
	"time"

	"cclab/internal/hostlimit"
	"cclab/transport/udp"
)

// Roles of a host report (hostlimit.Report.Role): the side of the flow the
// process was on.
const (
	RoleSender   = "sender"   // this process sent the flow's data
	RoleReceiver = "receiver" // this process received it
)

// hostWatch measures the host's part of one test flow: the process's CPU
// and the socket driver's counters from its start to its end.
type hostWatch struct {
	ep   *udp.Endpoint
	snap hostlimit.Snapshot
	ls   udp.LoopStats
}

// watchHost starts measuring on ep.
func watchHost(ep *udp.Endpoint) hostWatch {
	return hostWatch{ep: ep, snap: hostlimit.Take(), ls: ep.LoopStats()}
}

// report returns the judged report of the flow so far, with what fill adds
// (datagram mode's queue and receive-queue counts; may be nil). The driver's
// counters are differences since watchHost; on an endpoint several flows
// share, they include the others' traffic.
func (w hostWatch) report(role string, fill func(*hostlimit.Report)) *hostlimit.Report {
	now := w.ep.LoopStats()
	r := &hostlimit.Report{Role: role, Usage: hostlimit.Take().Since(w.snap)}
	r.Timers = lateSince(w.ls.TimerLate, now.TimerLate)
	r.ReadLate = lateSince(w.ls.ReadLate, now.ReadLate)
	r.Sent = now.DatagramsOut - w.ls.DatagramsOut
	r.SendErrors = now.WriteErrors - w.ls.WriteErrors
	r.Received = now.DatagramsIn - w.ls.DatagramsIn
	r.RecvDropped = now.RecvDrops - w.ls.RecvDrops
	if fill != nil {
		fill(r)
	}
	r.Judge()
	return r
}

// lateSince is the lateness counts between two readings of an endpoint's
// running counts (the maximum per windowMax).
func lateSince(before, after hostlimit.Late) hostlimit.Late {
	return hostlimit.Late{Count: after.Count - before.Count, Late: after.Late - before.Late, Max: windowMax(before.Max, after.Max)}
}

// windowMax is the largest lateness within a flow from the endpoint's
// running maximum before and after it: the maximum after, if the flow
// raised it; else 0, as the endpoint keeps one maximum and the flow's own
// (no larger than the earlier one) is not known. Reporting the endpoint's
// maximum instead repeated an earlier flow's lateness on every later one.
func windowMax(before, after time.Duration) time.Duration {
	if after > before {
		return after
	}
	return 0
}

// msDuration converts a result's milliseconds back to a duration (0 stays
// 0: unknown).
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// mergeHost combines the reports of a test's flows into one for the whole
// test: counters summed, the longest flow's CPU usage (the process's, so
// the same in each), judged again. Nil reports are skipped; nil if none.
func mergeHost(rs []*hostlimit.Report) *hostlimit.Report {
	var m *hostlimit.Report
	for _, r := range rs {
		if r == nil {
			continue
		}
		if m == nil {
			c := *r
			c.Reasons = nil
			m = &c
			continue
		}
		if r.Usage.Seconds > m.Usage.Seconds {
			m.Usage = r.Usage
		}
		m.Timers.Merge(r.Timers)
		m.ReadLate.Merge(r.ReadLate)
		if r.MinRTT > 0 && (m.MinRTT == 0 || r.MinRTT < m.MinRTT) {
			m.MinRTT = r.MinRTT
		}
		m.Generated += r.Generated
		m.QueueDropped += r.QueueDropped
		m.Sent += r.Sent
		m.SendErrors += r.SendErrors
		m.Received += r.Received
		m.RecvDropped += r.RecvDropped
	}
	if m != nil {
		m.Judge()
	}
	return m
}
