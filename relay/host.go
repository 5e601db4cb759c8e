package relay

import "cclab/internal/hostlimit"

// HostReport returns what limited the relay besides the links it models
// since it started (docs/metrics.md, "Host-limited runs"): its writes'
// lateness against the modelled instants, the process's CPU, failed
// writes; judged.
func (r *Relay) HostReport() *hostlimit.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hostReport(r.cnt)
}

// hostReport builds the report from the counters c (mu held).
func (r *Relay) hostReport(c Counters) *hostlimit.Report {
	h := &hostlimit.Report{Role: "relay", Usage: hostlimit.Take().Since(r.host), BusyPoll: r.cfg.BusyPoll}
	h.Writes = hostlimit.Late{Count: uint64(c.WriteLate.Hist.Count()), Late: uint64(c.WriteLate.Hist.Above(hostlimit.LateLimit)), Max: c.WriteLate.Max}
	h.Sent = uint64(c.Sent[0] + c.Sent[1])
	h.SendErrors = uint64(c.SendErrors)
	h.Received = uint64(c.Received[0] + c.Received[1])
	if r.cfg.HostCheck != nil {
		r.cfg.HostCheck(h)
	}
	h.Judge()
	return h
}
