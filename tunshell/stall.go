package tunshell

import (
	"sync"
	"time"

	"cclab/internal/hostlimit"
	"cclab/link"
	"cclab/qdisc"
	"cclab/relay"
)

// readGaps measures how long a TUN device's reader was away from it
// before reads that found packets already waiting (hostlimit.Stalls). A
// read of a TUN device carries no kernel receive stamp (tun_put_user
// copies only the packet), so the relay takes a packet's arrival as the
// read's instant: packets that waited in the device while the reader was
// off the CPU enter the link together. The gap, from the previous read's
// return to this read, bounds how long they waited; a read that had to
// wait for its first packet found none waiting and is not counted (a
// wake-up the host delayed after that wait is not seen). Times are ns on
// any monotonic clock (the tests' is fake). Safe for one reader and any
// number of callers of stalls.
type readGaps struct {
	mu   sync.Mutex
	left int64 // when the last read returned, ns; 0 before the first
	s    hostlimit.Stalls
}

// read records a read that returned packets at now (ns, > 0); waited says
// whether it waited for the first one.
func (g *readGaps) read(now int64, waited bool) {
	g.mu.Lock()
	if !waited && g.left != 0 {
		g.s.Add(time.Duration(now - g.left))
	}
	g.left = now
	g.mu.Unlock()
}

// setLimit sets the gap above which a read counts as a stall.
func (g *readGaps) setLimit(d time.Duration) {
	g.mu.Lock()
	g.s.Limit = d
	g.mu.Unlock()
}

// stalls returns the counts so far.
func (g *readGaps) stalls() hostlimit.Stalls {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.s
}

// drainTime returns how long the first rate-limited hop's full queue takes
// to drain at its rate, for the packets the relay reads into direction
// dir (relay.Fwd: the inner device, the uplink), with packets of mtu
// bytes for a queue limited in packets; over several rate-limited hops,
// the shortest. 0 when no hop of dir has a rate and a bounded queue (an
// unshaped path: nothing to overflow). A reader away longer than this
// can have let the link run idle and then offer it more than its queue
// holds at once.
func drainTime(cfg relay.Config, dir, mtu int) time.Duration {
	var d time.Duration
	for _, h := range cfg.Hops[dir] {
		if h.Rate <= 0 {
			continue
		}
		spec := h.Queue
		if spec == "" {
			spec = link.DefaultQueue
		}
		_, qc, err := qdisc.Registry.Config(spec)
		if err != nil {
			continue
		}
		b, ok := qc.(qdisc.Bounded)
		if !ok {
			continue
		}
		l := b.Capacity()
		bytes := l.Bytes
		if bytes == 0 {
			bytes = l.Packets * mtu
		}
		if bytes <= 0 {
			continue
		}
		hd := time.Duration(float64(bytes) * 8 / h.Rate * float64(time.Second))
		if d == 0 || hd < d {
			d = hd
		}
	}
	return d
}
