package transport

import "cclab/internal/spec"

// D-SACK (RFC 2883): the data receiver reports a duplicate segment in the
// next ACK, and the sender uses the report to detect spurious
// retransmissions (RFC 3708), to undo the congestion response to them
// (undo.go), to adapt RACK's reordering window (rack.go) and to classify an
// RTO as spurious (rtocause.go).
//
// On the wire the D-SACK block is a field of its own at the end of the ACK
// section (bit 7 of n_blocks, docs/wire.md), in absolute stream offsets, so that a
// duplicate below the cumulative point needs no negative gap and never takes
// one of the MaxSACKBlocks slots.

// retxRingLen is how many cumulatively acknowledged retransmissions the
// sender remembers, to tell a D-SACK of a retransmission (spurious, RFC 3708
// §3) from a D-SACK of a segment the network duplicated.
const retxRingLen = 64

// DSACKUser is implemented by strategies that use D-SACK information (RACK's
// reordering window, undo, the adaptive threshold); a connection whose
// strategy uses it asks the peer for D-SACK blocks in its handshake (flag
// hsDSACK, docs/wire.md), so that other connections' ACKs stay as before.
type DSACKUser interface {
	UsesDSACK() bool
}

// wantsDSACK reports whether the parsed strategy spec uses D-SACK (the
// client asks in its Initial, before the strategy is built with the final
// MSS).
func wantsDSACK(p spec.Parsed[Recovery, RecoveryEnv]) bool {
	rec, err := p.Build(RecoveryEnv{MSS: DefaultMaxDatagram - maxShortOverhead})
	if err != nil {
		return false
	}
	u, ok := rec.(DSACKUser)
	return ok && u.UsesDSACK()
}

// noteDuplicate records, at the receiver, the part of [s, e) that was
// already received: below the cumulative point or inside an out-of-order
// block (RFC 2883 §4: the first duplicate range is reported in the next ACK,
// and only there).
func (c *Conn) noteDuplicate(s, e uint64) {
	if !c.peerDSACK {
		return
	}
	if s < c.rcvNxt {
		c.dsack, c.dsackDue = sackBlock{s, min(e, c.rcvNxt)}, true
		return
	}
	// The first block ending after s is the only one that can hold the
	// lowest duplicate byte (the blocks are sorted and disjoint).
	if i := c.oooFrom(s + 1); i < len(c.ooo) && c.ooo[i].Start < e {
		b := c.ooo[i]
		c.dsack, c.dsackDue = sackBlock{max(s, b.Start), min(e, b.End)}, true
	}
}

// addDSACK puts the pending D-SACK block into the ACK section p.
func (c *Conn) addDSACK(p *packet) {
	if c.dsackDue {
		p.hasDSACK = true
		p.dsack = c.dsack
	}
}

// dsackState is the sender's D-SACK bookkeeping.
type dsackState struct {
	retx    *[retxRingLen]uint64 // offsets of retransmitted segments cumulatively acknowledged lately; allocated at the first (most connections never retransmit)
	retxN   int                  // entries written (ring position = retxN % retxRingLen)
	reports uint64               // D-SACK blocks received
}

// rememberRetx records that the retransmitted segment at off was
// cumulatively acknowledged.
func (d *dsackState) rememberRetx(off uint64) {
	if d.retx == nil {
		d.retx = new([retxRingLen]uint64)
	}
	d.retx[d.retxN%retxRingLen] = off
	d.retxN++
}

// coversRetx reports whether [s, e) holds the start of a remembered
// retransmission.
func (d *dsackState) coversRetx(s, e uint64) bool {
	for i := 0; i < min(d.retxN, retxRingLen); i++ {
		if off := d.retx[i]; off >= s && off < e {
			return true
		}
	}
	return false
}

// onDSACK handles the D-SACK block b of an ACK (RFC 2883 §4 sender rules,
// RFC 3708 §3 detection): it reports whether b duplicates a retransmission
// (so that the retransmission, or the original, was unnecessary). A block
// beyond the data sent is ignored (docs/wire.md).
func (c *Conn) onDSACK(b sackBlock, maxAck uint64) bool {
	if b.End > maxAck || b.Start >= b.End {
		return false
	}
	c.dsk.reports++
	c.stats.DSACKs++
	retx := false
	if b.Start < c.sb.una {
		retx = c.dsk.coversRetx(b.Start, b.End)
	}
	for i := c.sb.Find(b.Start); i >= 0 && i < c.sb.count; i++ {
		s := c.sb.Seg(i)
		if s.Off >= b.End {
			break
		}
		if s.Retrans > 0 {
			retx = true
		}
	}
	if retx {
		// Counted apart from SpuriousRetransmits (the Eifel check at the
		// cumulative ACK), which may already have counted the same one.
		c.stats.DSACKSpurious++
	}
	return retx
}
