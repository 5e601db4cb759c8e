package multihost_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"cclab/internal/hostlimit"
	"cclab/internal/netnstest"
	"cclab/qdisc"
	"cclab/relay"
)

// relaySample is one line of relays.jsonl (sampleRelays): what one
// emulated link's relay, or one namespace's devices, saw in one interval.
type relaySample struct {
	T          float64          `json:"t"`              // Unix seconds at the end of the interval
	Link       string           `json:"link,omitempty"` // the campaign route's name: "up HOST", "down HOST", "groups A>B"
	Writes     int64            `json:"writes,omitempty"`
	Late       int64            `json:"late,omitempty"`        // writes over hostlimit.LateLimit late
	MaxLateNS  int64            `json:"max_late_ns,omitempty"` // cumulative
	Arrivals   int64            `json:"arrivals,omitempty"`
	ModelDrops map[string]int64 `json:"model_drops,omitempty"`
	StallReads uint64           `json:"stall_reads,omitempty"` // both devices of the shell
	Stalls     uint64           `json:"stalls,omitempty"`
	Node       string           `json:"node,omitempty"`
	Dev        string           `json:"dev,omitempty"`
	TxDropped  uint64           `json:"tx_dropped,omitempty"`
	RxDropped  uint64           `json:"rx_dropped,omitempty"`
	QdiscDrops uint32           `json:"qdisc_drops,omitempty"`
}

// sampleRelays writes, every interval until the test ends, each relay's
// and each namespace device's increments into dir/relays.jsonl: a
// diagnosis of the emulation's own losses (kernel drops at the TUN
// devices, the relay's late writes and read stalls, the link model's
// drops), not an assertion; on with CCLAB_MULTIHOST_RELAYS=250ms
// (docs/campaigns.md, "Relays whose host could not keep up").
func sampleRelays(t *testing.T, n *netnstest.Network, groups []string, dir string, every time.Duration) {
	f, err := os.Create(filepath.Join(dir, "relays.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type relayLink struct {
		name string
		rl   *relay.Relay
		dir  int
	}
	var links []relayLink
	for _, h := range n.Hosts {
		links = append(links, relayLink{"up " + h.Name, n.Link(h.Name), relay.Fwd}, relayLink{"down " + h.Name, n.Link(h.Name), relay.Rev})
	}
	for c := 1; c < len(groups); c++ {
		links = append(links, relayLink{"groups " + groups[c] + ">" + groups[0], n.InterLink(c), relay.Fwd},
			relayLink{"groups " + groups[0] + ">" + groups[c], n.InterLink(c), relay.Rev})
	}
	nodes := append(append([]*netnstest.Node{}, n.Hosts...), n.Routers...)
	type prevRelay struct {
		writes, late, arrivals int64
		drops                  [16]int64
		stalls                 hostlimit.Stalls
	}
	prev := map[string]*prevRelay{}
	prevDev := map[string]relaySample{}
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done; f.Close() })
	go func() {
		defer close(done)
		enc := json.NewEncoder(f)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			now := float64(time.Now().UnixNano()) / 1e9
			for _, l := range links {
				c := l.rl.Counters()
				hs := l.rl.HopStats(l.dir)
				st := hostlimit.Stalls{}
				if l.dir == relay.Fwd {
					if r := l.rl.HostReport(); r.ReadStalls != nil {
						st = *r.ReadStalls
					}
				}
				p := prev[l.name]
				if p == nil {
					p = &prevRelay{}
					prev[l.name] = p
				}
				s := relaySample{T: now, Link: l.name, ModelDrops: map[string]int64{}}
				// Write lateness is relay-wide (both directions): the up link carries it.
				if l.dir == relay.Fwd {
					w, late := c.WriteLate.Hist.Count(), c.WriteLate.Hist.Above(hostlimit.LateLimit)
					s.Writes, s.Late, s.MaxLateNS = w-p.writes, late-p.late, int64(c.WriteLate.Max)
					p.writes, p.late = w, late
					s.StallReads, s.Stalls = st.Reads-p.stalls.Reads, st.Stalls-p.stalls.Stalls
					p.stalls = st
				}
				var arr int64
				var drops [16]int64
				for _, h := range hs {
					arr += h.Arrivals
					for i := 1; i < len(h.Drops) && i < len(drops); i++ {
						drops[i] += h.Drops[i]
					}
				}
				s.Arrivals = arr - p.arrivals
				p.arrivals = arr
				for i := 1; i < len(drops); i++ {
					if d := drops[i] - p.drops[i]; d > 0 {
						s.ModelDrops[qdisc.DropReason(i).String()] = d
					}
				}
				p.drops = drops
				if s.Writes > 0 || s.Arrivals > 0 || len(s.ModelDrops) > 0 || s.Stalls > 0 {
					enc.Encode(s)
				}
			}
			for _, nd := range nodes {
				nd.Do(func() error {
					ls, err := netlink.LinkList()
					if err != nil {
						return err
					}
					for _, l := range ls {
						a := l.Attrs()
						s := relaySample{T: now, Node: nd.Name, Dev: a.Name}
						if a.Statistics != nil {
							s.TxDropped, s.RxDropped = a.Statistics.TxDropped, a.Statistics.RxDropped
						}
						if qs, err := netlink.QdiscList(l); err == nil {
							for _, q := range qs {
								if st := q.Attrs().Statistics; st != nil && st.Queue != nil {
									s.QdiscDrops += st.Queue.Drops
								}
							}
						}
						k := nd.Name + "/" + a.Name
						p := prevDev[k]
						prevDev[k] = s
						d := relaySample{T: now, Node: nd.Name, Dev: a.Name, TxDropped: s.TxDropped - p.TxDropped,
							RxDropped: s.RxDropped - p.RxDropped, QdiscDrops: s.QdiscDrops - p.QdiscDrops}
						if d.TxDropped > 0 || d.RxDropped > 0 || d.QdiscDrops > 0 {
							enc.Encode(d)
						}
					}
					return nil
				})
			}
		}
	}()
}
