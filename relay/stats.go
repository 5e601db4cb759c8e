package relay

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"cclab/clock"
	"cclab/internal/units"
	"cclab/qdisc"
)

// HopLine is one hop's statistics over one interval in a JSON stats line.
type HopLine struct {
	Dir            string           `json:"dir"`                // fwd or rev
	Hop            int              `json:"hop"`                // 0-based index along the direction
	QueueLen       int              `json:"queue_len"`          // packets queued at the end of the interval
	QueueBytes     int              `json:"queue_bytes"`        // bytes queued at the end of the interval
	QueueDelayMean float64          `json:"queue_delay_ms"`     // mean sojourn of packets dequeued in the interval, ms
	QueueDelayMax  float64          `json:"queue_delay_max_ms"` // largest sojourn in the interval, ms
	Arrivals       int64            `json:"arrivals"`           // packets offered (incl. cross traffic)
	Departures     int64            `json:"departures"`         // packets delivered at the far end
	DepartureBytes int64            `json:"departure_bytes"`    // bytes delivered
	Rate           float64          `json:"rate_bps"`           // delivered rate, bits/s
	Utilization    float64          `json:"utilization"`        // fraction of the interval the serializer was busy
	Drops          map[string]int64 `json:"drops"`              // drops in the interval by reason
	Marks          int64            `json:"marks"`              // CE marks in the interval
	Injected       int64            `json:"injected"`           // cross-traffic packets offered
}

// FlowLine is one flow's departures over one interval.
type FlowLine struct {
	Flow       string  `json:"flow"`             // flow key, hex
	Client     string  `json:"client,omitempty"` // client address (UDP relay)
	Src        string  `json:"src,omitempty"`    // source address:port (packet mode)
	Dst        string  `json:"dst,omitempty"`    // destination address:port (packet mode)
	Proto      string  `json:"proto,omitempty"`  // transport protocol (packet mode): tcp, udp, icmp, ... or its number
	Dir        string  `json:"dir"`
	Departures int64   `json:"departures"`
	Bytes      int64   `json:"bytes"`
	Rate       float64 `json:"rate_bps"`
}

// StatsLine is one JSON line of -stats output.
type StatsLine struct {
	Time     float64    `json:"t"`        // seconds since the relay started
	Interval float64    `json:"interval"` // seconds covered
	Final    bool       `json:"final,omitempty"`
	Hops     []HopLine  `json:"hops"`
	Flows    []FlowLine `json:"flows"`
	Counters Counters   `json:"counters"`
	// Host is each direction's host-limit evidence over the interval
	// (HostLine).
	Host []HostLine `json:"host"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// writeStats writes one line covering [lastStat, now]. Called with mu held.
func (r *Relay) writeStats(now clock.Time, final bool) {
	iv := now.Sub(r.lastStat)
	if iv <= 0 {
		iv = 1
	}
	line := StatsLine{Time: now.Sub(r.base).Seconds(), Interval: iv.Seconds(), Final: final, Counters: r.snapshot(), Host: r.hostLines(iv, r.wall(now))}
	for dir := 0; dir < 2; dir++ {
		for _, h := range r.paths[dir] {
			st := h.l.Stats()
			pv := h.prev
			hl := HopLine{
				Dir: dirNames[dir], Hop: h.idx, QueueLen: st.QueueLen, QueueBytes: st.QueueBytes,
				Arrivals: st.Arrivals - pv.Arrivals, Departures: st.Departures - pv.Departures,
				DepartureBytes: st.DepartureBytes - pv.DepartureBytes, Marks: st.Marks - pv.Marks,
				Injected: st.Injected - pv.Injected, QueueDelayMax: ms(h.maxSojourn), Drops: map[string]int64{},
			}
			if n := st.Dequeues - pv.Dequeues; n > 0 {
				hl.QueueDelayMean = ms((st.QueueDelaySum - pv.QueueDelaySum) / time.Duration(n))
			}
			hl.Rate = float64(hl.DepartureBytes) * 8 / iv.Seconds()
			hl.Utilization = float64(st.BusyTime-pv.BusyTime) / float64(iv)
			for reason := 1; reason < len(st.Drops); reason++ {
				if d := st.Drops[reason] - pv.Drops[reason]; d > 0 {
					hl.Drops[qdisc.DropReason(reason).String()] = d
				}
			}
			line.Hops = append(line.Hops, hl)
			h.prev = st
			h.maxSojourn = 0
		}
	}
	idx := make([]int, 0, len(r.clients))
	for _, c := range r.clients {
		idx = append(idx, c.idx)
	}
	sort.Ints(idx)
	for _, i := range idx {
		c := r.byIdx[i]
		for dir := 0; dir < 2; dir++ {
			fs := &c.fs[dir]
			fl := FlowLine{Flow: fmt.Sprintf("%016x", c.flow[dir]), Client: c.addr.String(), Dir: dirNames[dir],
				Departures: fs.departures - fs.prevDepartures, Bytes: fs.bytes - fs.prevBytes}
			fl.Rate = float64(fl.Bytes) * 8 / iv.Seconds()
			fs.prevDepartures, fs.prevBytes = fs.departures, fs.bytes
			line.Flows = append(line.Flows, fl)
		}
	}
	line.Flows = r.flows.lines(line.Flows, iv)
	r.lastStat = now
	if r.cfg.Stats == nil {
		return
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	b = append(b, '\n')
	r.cfg.Stats.Write(b)
}

// writeSummary prints totals since the start; rates and utilization are
// over the active period, from the first datagram read to the last one
// read or sent (not the relay's whole lifetime, idle time before and after
// the traffic included). Called with mu held.
func (r *Relay) writeSummary(now clock.Time) {
	w := r.cfg.Summary
	if w == nil {
		return
	}
	life := now.Sub(r.base)
	el := r.lastActive.Sub(r.firstAt)
	period := "no traffic"
	if r.active && el > 0 {
		period = fmt.Sprintf("active %.3fs, from %.3fs to %.3fs", el.Seconds(), r.firstAt.Sub(r.base).Seconds(), r.lastActive.Sub(r.base).Seconds())
	} else {
		el = max(life, time.Nanosecond) // nothing to rate: avoid 0/0
	}
	if r.packet {
		fmt.Fprintf(w, "bottleneck summary after %.3fs (%s): %d flows\n", life.Seconds(), period, r.flows.seen)
	} else {
		fmt.Fprintf(w, "bottleneck summary after %.3fs (%s): %d clients\n", life.Seconds(), period, r.cnt.Clients)
	}
	unit := "datagrams"
	if r.packet {
		unit = "packets"
	}
	for dir := 0; dir < 2; dir++ {
		fmt.Fprintf(w, "  %s: received %d %s (%s), sent %d (%s)\n", dirNames[dir],
			r.cnt.Received[dir], unit, units.FormatBytes(r.cnt.ReceivedBytes[dir]), r.cnt.Sent[dir], units.FormatBytes(r.cnt.SentBytes[dir]))
		for _, h := range r.paths[dir] {
			st := h.l.Stats()
			var meanQ time.Duration
			if st.Dequeues > 0 {
				meanQ = st.QueueDelaySum / time.Duration(st.Dequeues)
			}
			fmt.Fprintf(w, "    hop %d: arrivals %d, departures %d (%s, %s/s mean), drops %d", h.idx,
				st.Arrivals, st.Departures, units.FormatBytes(st.DepartureBytes),
				units.FormatRate(float64(st.DepartureBytes)*8/el.Seconds()), st.TotalDrops())
			for reason := 1; reason < len(st.Drops); reason++ {
				if st.Drops[reason] > 0 {
					fmt.Fprintf(w, " %s=%d", qdisc.DropReason(reason), st.Drops[reason])
				}
			}
			fmt.Fprintf(w, ", marks %d, queue delay mean %v max %v, utilization %.1f%%\n", st.Marks,
				meanQ.Round(time.Microsecond), st.QueueDelayMax.Round(time.Microsecond), 100*float64(st.BusyTime)/float64(el))
		}
	}
	c := r.snapshot()
	if n := c.WriteLate.Hist.Count(); n > 0 {
		fmt.Fprintf(w, "  write lateness vs modelled instant (%d writes): median %v, p99 %v, p99.9 %v, max %v\n",
			n, c.WriteLate.P50, c.WriteLate.P99, c.WriteLate.P999, c.WriteLate.Max)
	}
	if n := c.ReadLate.Hist.Count(); n > 0 {
		fmt.Fprintf(w, "  read lateness vs kernel receive (%d reads): median %v, p99 %v, p99.9 %v, max %v\n",
			n, c.ReadLate.P50, c.ReadLate.P99, c.ReadLate.P999, c.ReadLate.Max)
	}
	if n := c.SleepLate.Hist.Count(); n > 0 {
		fmt.Fprintf(w, "  scheduler sleep lateness (%d sleeps): median %v, p99 %v, p99.9 %v; lead %v\n",
			n, c.SleepLate.P50, c.SleepLate.P99, c.SleepLate.P999, c.Lead)
		fmt.Fprintf(w, "  scheduler wait for the lock: median %v, p99 %v, p99.9 %v\n", c.LockWait.P50, c.LockWait.P99, c.LockWait.P999)
	}
	if n := c.Loop.Hist.Count(); n > 0 {
		fmt.Fprintf(w, "  busy-polling loop passes (%d): median %v, p99 %v, p99.9 %v\n", n, c.Loop.P50, c.Loop.P99, c.Loop.P999)
	}
	if n := c.SendTime.Hist.Count(); n > 0 {
		fmt.Fprintf(w, "  send time per batched write (%d writes): median %v, p99 %v, p99.9 %v\n", n, c.SendTime.P50, c.SendTime.P99, c.SendTime.P999)
	}
	if r.realtimeErr != nil {
		fmt.Fprintf(w, "  scheduler not real-time: %v\n", r.realtimeErr)
	}
	if msg := r.hostReport(c).Warning(); msg != "" {
		fmt.Fprintf(w, "  %s\n", msg)
	}
	fmt.Fprintf(w, "  send errors %d, read errors %d, truncated %d, client-limit drops %d, expired sessions %d, evicted sessions %d, orphans %d",
		c.SendErrors, c.ReadErrors, c.Truncated, c.ClientLimit, c.Expired, c.Evicted, c.Orphans)
	if r.packet {
		fmt.Fprintf(w, ", malformed %d", c.Malformed)
	}
	if c.MTUDrops > 0 || c.Oversize > 0 {
		fmt.Fprintf(w, ", MTU drops %d, oversize %d", c.MTUDrops, c.Oversize)
	}
	fmt.Fprintln(w)
}

// Counters are relay-wide counters outside the links.
type Counters struct {
	Received      [2]int64 `json:"received"`       // datagrams read, per direction
	ReceivedBytes [2]int64 `json:"received_bytes"` // bytes read, per direction
	Sent          [2]int64 `json:"sent"`           // datagrams written, per direction
	SentBytes     [2]int64 `json:"sent_bytes"`     // bytes written, per direction
	SendErrors    int64    `json:"send_errors"`    // datagrams a WriteBatch failed to send
	ReadErrors    int64    `json:"read_errors"`    // transient read errors (e.g. ICMP port unreachable on an upstream socket)
	Truncated     int64    `json:"truncated"`      // datagrams that filled the whole receive buffer (probably truncated)
	ClientLimit   int64    `json:"client_limit"`   // datagrams dropped because MaxClients sessions exist, none idle for EvictIdle
	DialErrors    int64    `json:"dial_errors"`    // upstream sockets that could not be opened
	Clients       int64    `json:"clients"`        // client sessions opened
	Expired       int64    `json:"expired"`        // client sessions closed after ClientTimeout
	Evicted       int64    `json:"evicted"`        // client sessions replaced by a new client (MaxClientsPerHost, or MaxClients and EvictIdle)
	Orphans       int64    `json:"orphans"`        // packets whose client session ended while they were in the links
	Malformed     int64    `json:"malformed"`      // packet mode: packets that are not IPv4 or IPv6 (dropped)
	Oversize      int64    `json:"oversize"`       // datagrams longer than Config.BufSize (dropped)
	MTUDrops      int64    `json:"mtu_drops"`      // datagrams dropped at a hop whose configured MTU their size on the link exceeds
	ReadCalls     int64    `json:"read_calls"`     // batched reads that returned datagrams (recvmmsg calls on UDP sockets)
	WriteCalls    int64    `json:"write_calls"`    // batched writes (sendmmsg calls on UDP sockets: up to 64 entries, each a datagram or a GSO run)
	GROReads      int64    `json:"gro_reads"`      // reads that held several datagrams coalesced by the kernel (UDP GRO)
	// Lateness of writes against the modelled instants (write time minus
	// modelled arrival at the far end of the last hop): a coarse histogram
	// with bucket upper bounds LateBuckets, and WriteLate.
	Late      [len(LateBuckets) + 1]int64 `json:"late"`
	WriteLate Latency                     `json:"write_late"`
	// Read lateness: when the reader got a datagram (recvmmsg returned)
	// minus when the kernel received it (SO_TIMESTAMPNS, where the socket
	// has stamps: UDP sockets on Linux), per received message (with GRO,
	// against its first datagram). The links take the kernel stamp as the
	// arrival instant (docs/bottleneck.md), so this is no longer part of
	// the emulation error; it shows how long datagrams waited in the
	// socket for the reader (the host's scheduling).
	ReadLate Latency `json:"read_late"`
	// Sleep lateness: how late the scheduler's sleeps woke against the
	// instant each asked for (the machine's wake-up latency, timer slack
	// included), per sleep that ran to its end. Lead is how long before an
	// instant the scheduler stops sleeping (Config.Spin 0: learned from
	// these, see wakeLead; else Spin; 0 where it does not poll: one CPU or
	// one P, Config.Realtime), as of the latest snapshot.
	SleepLate Latency       `json:"sleep_late"`
	Lead      time.Duration `json:"lead_ns"`
	// LockWait: how long the scheduler, awake, waited for the relay's lock
	// (held by a reader handling a read).
	LockWait Latency `json:"lock_wait"`
	// SendTime: how long each batched write to one socket took (its
	// sendmmsg calls; on loopback they also carry the datagrams into the
	// receiving socket), after the write lateness.
	SendTime Latency `json:"send_time"`
	// Loop: with Config.BusyPoll or Config.WaitPoll, the length of each
	// pass of the polling loop (from one look at the clock to the next;
	// with WaitPoll from the end of a wait, if the pass follows one): the
	// most the loop itself holds a write back beyond its instant (besides
	// Coalesce).
	Loop Latency `json:"loop"`
	// LoopWaits counts the times the loop blocked (Config.WaitPoll; its
	// overshoots go to SleepLateHist), LoopRests the rests a real-time
	// loop took after a long stretch with little blocking (waitRestAfter,
	// waitRest: wait.go).
	LoopWaits int64 `json:"loop_waits"`
	LoopRests int64 `json:"loop_rests"`
}

// snapshot returns the counters with the lateness percentiles filled in.
// Called with mu held.
func (r *Relay) snapshot() Counters {
	c := r.cnt
	for _, l := range []*Latency{&c.WriteLate, &c.ReadLate, &c.SleepLate, &c.LockWait, &c.SendTime, &c.Loop} {
		l.P50, l.P99, l.P999 = l.Hist.Percentiles()
	}
	return c
}

// LateBuckets are the upper bounds of the Counters.Late histogram; the last
// bucket counts everything above the last bound.
var LateBuckets = [...]time.Duration{10 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	200 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond}
