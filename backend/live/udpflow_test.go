package liverun

import (
	"testing"

	"cclab/clock"
)

// TestLiveUDPFlows runs raw UDP flows live through the relay: a CBR flow
// above the link rate and a small one under DRR (per-flow fairness at the
// relay's queue). Each is measured per flow like the simulator's: packets
// sent at the sender, delivered at the receiver, dropped at the link by
// flow; the overloading flow's drops account for what it sent and did not
// deliver, and the small flow, under its fair share, loses (almost)
// nothing.
func TestLiveUDPFlows(t *testing.T) {
	skipShort(t)
	res := runLive(t, Runner{}, liveSpec(t, `name: live-udp
duration: 3s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 4Mbit, delay: 5ms, queue: "drr:quantum=1000,limit=32p"}
flows:
  - {name: big, mode: udp, traffic: "cbr:rate=6Mbit,size=1000"}
  - {name: small, mode: udp, traffic: "cbr:rate=500kbit,size=1000,phase"}
  - {name: tcp, cc: reno}
`))
	vals := map[int64]map[string]float64{}
	for _, f := range res.Metrics.Flows {
		vals[f.ID] = f.Values
		t.Logf("flow %d %s: sent %v packets, delivered %v bytes, link drops %v, throughput %.2f Mbit/s", f.ID, f.Name,
			f.Values["total_packets_sent"], f.Values["total_delivered"], f.Values["total_link_drops"], f.Values["mean_throughput"]/1e6)
	}
	big, small := vals[1], vals[2]
	if big == nil || small == nil {
		t.Fatalf("flows measured: %v, want flows 1 and 2 (the UDP flows)", vals)
	}
	for id, v := range map[int]map[string]float64{1: big, 2: small} {
		if v["total_packets_sent"] <= 0 || v["total_delivered"] <= 0 {
			t.Errorf("flow %d: sent %v packets, delivered %v bytes: want both measured", id, v["total_packets_sent"], v["total_delivered"])
		}
	}
	// The big flow offers 1.5 times the link: DRR drops what exceeds its share.
	sent, drops, delivered := big["total_packets_sent"], big["total_link_drops"], big["total_delivered"]/1000
	if drops < sent/10 {
		t.Errorf("big flow: %v link drops of %v sent, want its excess dropped at the link", drops, sent)
	}
	// What the flows sent was delivered or dropped where it is counted (at
	// a link or by a full receive buffer), counted over the whole run once
	// it drained: the window's totals differ by what is in flight at its
	// edges, which grows with the host's load (the relay and the receiver
	// read late).
	t.Logf("big flow in the window: sent %v, delivered %v, dropped %v; run-wide: %v unaccounted, %v receive-buffer drops",
		sent, delivered, drops, res.Notes[NoteUDPUnaccounted], res.Notes[NoteUDPRecvDrops])
	if n, ok := res.Notes[NoteUDPUnaccounted]; !ok || n != 0 {
		t.Errorf("raw UDP datagrams unaccounted (sent, neither delivered nor dropped where counted): %v (noted %t), want 0", n, ok)
	}
	if tp := big["mean_throughput"]; tp > 4e6 {
		t.Errorf("big flow: throughput %.2f Mbit/s above the 4 Mbit/s link", tp/1e6)
	}
	// Under its fair share the small flow loses (almost) nothing, but for
	// a burst the host made: a sender late by L sends the L x 62.5
	// datagrams/s it owes at once (open loop), which DRR's longest-queue
	// drop takes from it once it outgrows the others' queues (measured at
	// load 38: a 0.74 s stall, 39 drops; every run late by at most 0.19 s,
	// none).
	late := res.Notes[NoteUDPSendLate]
	if d, sent := small["total_link_drops"], small["total_packets_sent"]; d > sent/20+late*500e3/8/1000 {
		t.Errorf("small flow under DRR: %v drops of %v sent (senders late by up to %.3f s), want (almost) none below its fair share", d, sent, late)
	}
	if n := res.Notes[NoteUDPBad]; n != 0 {
		t.Errorf("malformed datagrams at the UDP receiver: %v, want 0", n)
	}
}

// TestUDPHeader: the live raw UDP header round-trips and a short datagram
// is refused.
func TestUDPHeader(t *testing.T) {
	b := make([]byte, udpHeaderLen)
	putUDPHeader(b, 7, 1234, clock.Time(5e9))
	flow, seq, sent, ok := parseUDPHeader(b)
	if !ok || flow != 7 || seq != 1234 || sent != clock.Time(5e9) {
		t.Errorf("got flow %d seq %d sent %v ok %t, want 7 1234 5s true", flow, seq, sent, ok)
	}
	if _, _, _, ok := parseUDPHeader(b[:udpHeaderLen-1]); ok {
		t.Errorf("a %d-byte datagram parsed, want refused", udpHeaderLen-1)
	}
}

// FuzzUDPHeader: any datagram either parses to the values a header would
// carry or is refused, never panics.
func FuzzUDPHeader(f *testing.F) {
	b := make([]byte, udpHeaderLen+10)
	putUDPHeader(b, 3, 99, clock.Time(1e9))
	f.Add(b)
	f.Add([]byte{})
	f.Add(make([]byte, udpHeaderLen-1))
	f.Fuzz(func(t *testing.T, data []byte) {
		flow, seq, sent, ok := parseUDPHeader(data)
		if ok != (len(data) >= udpHeaderLen) {
			t.Fatalf("%d bytes: ok %t", len(data), ok)
		}
		if ok {
			c := make([]byte, udpHeaderLen)
			putUDPHeader(c, flow, seq, sent)
			if string(c) != string(data[:udpHeaderLen]) {
				t.Fatalf("header does not round-trip")
			}
		}
	})
}
