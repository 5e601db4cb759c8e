package qdisc

import (
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// rec is a Handler that records every drop and mark.
type rec struct {
	drops []dropRec
	marks []uint64 // packet IDs
}

type dropRec struct {
	at     clock.Time
	id     uint64
	flow   uint64
	reason DropReason
}

func (r *rec) Dropped(now clock.Time, p *Packet, reason DropReason) {
	r.drops = append(r.drops, dropRec{now, p.ID, p.Flow, reason})
}

func (r *rec) Marked(_ clock.Time, p *Packet) { r.marks = append(r.marks, p.ID) }

// count returns the number of drops with reason.
func (r *rec) count(reason DropReason) int {
	n := 0
	for _, d := range r.drops {
		if d.reason == reason {
			n++
		}
	}
	return n
}

// pktGen hands out packets with increasing IDs.
type pktGen struct{ id uint64 }

func (g *pktGen) pkt(flow uint64, size int) *Packet {
	g.id++
	return &Packet{ID: g.id, Flow: flow, Size: size}
}

func (g *pktGen) ect(flow uint64, size int) *Packet {
	p := g.pkt(flow, size)
	p.ECN = ecn.ECT0
	return p
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5eed)) }

// at returns the instant d after clock.Start.
func at(d time.Duration) clock.Time { return clock.Start.Add(d) }

// drain dequeues everything at now and returns the IDs in order.
func drain(q Queue, now clock.Time) []uint64 {
	var ids []uint64
	for p := q.Dequeue(now); p != nil; p = q.Dequeue(now) {
		ids = append(ids, p.ID)
	}
	return ids
}
