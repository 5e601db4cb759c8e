package relay

import (
	"time"

	"cclab/internal/hostlimit"
	"cclab/netio"
)

// HostLine is the relay's host-limit evidence for one direction over one
// statistics interval (a StatsLine's host[]; docs/metrics.md,
// "Host-limited runs", "A relay's intervals"): what the relay's host did
// to the packets besides the link model. A campaign lines the intervals
// up with its transfers by Wall (cclab campaign relay-stats).
type HostLine struct {
	Dir  string `json:"dir"`     // fwd or rev
	Wall int64  `json:"wall_ns"` // the interval's end, Unix ns (the relay's wall clock)
	// Span is the interval's length, ns: it began at Wall − Span.
	Span   int64 `json:"span_ns"`
	Writes int64 `json:"writes"` // packets written in the direction
	// Late counts the writes more than hostlimit.LateLimit after their
	// modelled instant: the relay's host held them back.
	Late int64 `json:"late"`
	// RxQueueDrops are packets of the direction the kernel dropped before
	// the relay read them (its UDP sockets' receive-buffer overflows,
	// netio.ReceiveDrops; a link shell's TUN device's transmit-queue
	// drops, Config.KernelDrops): losses the link model never made. -1
	// where unknown.
	RxQueueDrops int64 `json:"rx_queue_drops"`
}

// Host-limit codes of a relay's interval (HostLine.Reasons).
const (
	// CodeRxQueueDrops: the kernel dropped packets before the relay read
	// them.
	CodeRxQueueDrops = "rx_queue_drops"
	// CodeLate: more than hostlimit.LateFraction of the writes, and at
	// least hostlimit.MinLate, were later than hostlimit.LateLimit (the
	// rule of the relay's whole-run check, relay_late, per interval).
	CodeLate = "late"
)

// Reasons returns why the interval was host-limited (CodeRxQueueDrops,
// CodeLate), none when it was not.
func (h HostLine) Reasons() []string {
	var out []string
	if h.RxQueueDrops > 0 {
		out = append(out, CodeRxQueueDrops)
	}
	l := hostlimit.Late{Count: uint64(max(h.Writes, 0)), Late: uint64(max(h.Late, 0))}
	if l.Fraction() > hostlimit.LateFraction && l.Late >= hostlimit.MinLate {
		out = append(out, CodeLate)
	}
	return out
}

// Start returns when the interval began.
func (h HostLine) Start() time.Time { return time.Unix(0, h.Wall-h.Span) }

// End returns when the interval ended.
func (h HostLine) End() time.Time { return time.Unix(0, h.Wall) }

// hostIv is a direction's evidence since the last statistics line.
type hostIv struct {
	writes, late int64
	kernel       uint64 // cumulative kernel drops at the last line
}

// countWrite counts one write of direction dir that was late against its
// modelled instant. Called with mu held.
func (r *Relay) countWrite(dir int, late time.Duration) {
	r.iv[dir].writes++
	if late > hostlimit.LateLimit {
		r.iv[dir].late++
	}
}

// kernelDrops returns the cumulative kernel drops of direction dir's
// packets before the relay read them: Config.KernelDrops where set, else
// the receive-buffer drops of the relay's UDP sockets that receive them
// (forward: the listening sockets; reverse: the clients' upstream
// sockets), and whether known. Called with mu held.
func (r *Relay) kernelDrops(dir int) (uint64, bool) {
	if r.cfg.KernelDrops != nil {
		return r.cfg.KernelDrops(dir)
	}
	var conns []netio.Conn
	if dir == Fwd {
		conns = append(append(conns, r.ln), r.entries...)
	} else {
		for _, c := range r.clients {
			conns = append(conns, c.up)
		}
	}
	var n uint64
	for _, c := range conns {
		d, ok := netio.ReceiveDrops(c)
		if !ok {
			return 0, false
		}
		n += d
	}
	return n, true
}

// hostLines returns the directions' evidence over [lastStat, now] and
// starts the next interval. Called with mu held.
func (r *Relay) hostLines(span time.Duration, wall time.Time) []HostLine {
	out := make([]HostLine, 2)
	for dir := range out {
		iv := &r.iv[dir]
		h := HostLine{Dir: dirNames[dir], Wall: wall.UnixNano(), Span: int64(span), Writes: iv.writes, Late: iv.late, RxQueueDrops: -1}
		if k, ok := r.kernelDrops(dir); ok {
			// A closed upstream socket takes its drops with it: never
			// count backwards.
			h.RxQueueDrops = int64(k - min(k, iv.kernel))
			iv.kernel = k
		}
		iv.writes, iv.late = 0, 0
		out[dir] = h
	}
	return out
}
