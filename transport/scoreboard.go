package transport

import (
	"sort"

	"cclab/clock"
)

// Segment is one transmitted piece of the stream as the sender tracks it.
// Segment boundaries never change: a retransmission resends the same bytes.
type Segment struct {
	Off     uint64     // stream offset of the first payload byte
	Len     int        // payload bytes
	Fin     bool       // carries the FIN (occupies one extra unit of acknowledgement space)
	skip    uint32     // if Sacked: the segments from this one's index i to i+skip-1 are all SACKed (>= 1; Scoreboard.pastSacked)
	SentAt  clock.Time // time of the latest (re)transmission
	TS      uint32     // timestamp sent with the latest (re)transmission, µs
	tsNext  uint32     // the next segment in the transmission-ordered list (Scoreboard.tsHead), as ring position + 1; 0: none
	Retrans int        // number of retransmissions
	Sacked  bool       // selectively acknowledged
	Lost    bool       // marked lost and not retransmitted since
	held    bool       // SACKed but still counted in pipe (Scoreboard.holdRetx)
	tsPrev  uint32     // the previous segment in the transmission-ordered list, as tsNext
	SendSeq uint64     // transmission order of the latest (re)transmission (1, 2, ... per connection)
	rate    rateStamp  // delivery state when (re)sent (ratesample.go)
}

// End returns the end of the segment in acknowledgement space (the FIN counts
// as one unit after the last payload byte).
func (s *Segment) End() uint64 {
	if s.Fin {
		return s.Off + uint64(s.Len) + 1
	}
	return s.Off + uint64(s.Len)
}

// Scoreboard is the sender's record of outstanding segments (sent, not yet
// cumulatively acknowledged), in stream order, with SACK and loss marks. It is
// what a Recovery strategy reads and marks; the connection keeps it
// consistent with ACKs. Indexes run from 0 (the segment at Una) to Count()-1.
//
// Byte counters follow RFC 6675 §2: Pipe counts segments neither SACKed nor
// marked lost (a retransmitted lost segment counts again once retransmitted).
// With holdRetx (the recovery option rxtpipe) a segment retransmitted since
// the latest timeout stays in Pipe when it is SACKed, until the cumulative
// ACK covers it or the next timeout (releaseHeld), as ns-3 3.37 counts it.
type Scoreboard struct {
	segs  []Segment // ring buffer
	head  int
	count int

	una     uint64 // oldest unacknowledged offset (acknowledgement space)
	nxt     uint64 // next new payload offset (HighData of RFC 6675, exclusive)
	sacked  int    // payload bytes SACKed and not yet cumulatively acknowledged
	lost    int    // payload bytes marked lost, not SACKed, not retransmitted since
	pipe    int    // RFC 6675 pipe, bytes
	highSck uint64 // highest SACKed end (acknowledgement space), 0 if none
	lostIdx int    // no segment below this index is marked lost
	sends   uint64 // transmissions so far (last SendSeq given)
	highSSq uint64 // highest SendSeq among never-retransmitted segments ever SACKed
	// holdRetx keeps a SACKed segment in pipe if it was retransmitted
	// since the latest timeout (ns-3 3.37's TcpTxBuffer: Update sets
	// m_sacked and leaves m_retrans, which BytesInFlight adds back until
	// DiscardUpTo or SetSentListLost clears it); rtoSends is sends at the
	// latest timeout.
	holdRetx bool
	rtoSends uint64
	// tsHead and tsTail are the ends of the transmission-ordered list of
	// the outstanding segments neither SACKed nor marked lost, in
	// increasing SendSeq, linked through Segment.tsNext and tsPrev (ring
	// positions + 1; 0: empty). It is the time-sorted list of RFC 8985's
	// implementation notes (Linux tsorted_sent_queue): RACK's loss
	// detection visits only the segments it may mark (rack.go), not every
	// SACKed one below them.
	tsHead, tsTail uint32

	pool *Buffers // where segment buffers come from and go back to (nil: allocated)
}

// Count returns the number of outstanding segments.
func (sb *Scoreboard) Count() int { return sb.count }

// Seg returns the i-th outstanding segment (0 is the oldest). Strategies must
// treat it as read-only and change marks only through Ctx.MarkLost.
func (sb *Scoreboard) Seg(i int) *Segment {
	return &sb.segs[(sb.head+i)&(len(sb.segs)-1)]
}

// runs returns the outstanding segments in index order as at most two
// contiguous parts of the ring (a holds indexes 0..len(a)-1, b the rest):
// a scan in index order walks them without the ring's index arithmetic and
// bounds check per segment. Strategies treat them as read-only (Seg).
func (sb *Scoreboard) runs() (a, b []Segment) {
	if sb.count == 0 {
		return nil, nil
	}
	if end := sb.head + sb.count; end <= len(sb.segs) {
		return sb.segs[sb.head:end], nil
	}
	return sb.segs[sb.head:], sb.segs[:sb.head+sb.count-len(sb.segs)]
}

// Una returns the cumulative acknowledgement point (SND.UNA), bytes.
func (sb *Scoreboard) Una() uint64 { return sb.una }

// Nxt returns the end of the highest data sent (SND.NXT, RFC 6675 HighData), bytes.
func (sb *Scoreboard) Nxt() uint64 { return sb.nxt }

// FlightSize returns RFC 5681 FlightSize: payload bytes sent and not
// cumulatively acknowledged (SACKed bytes included).
func (sb *Scoreboard) FlightSize() int {
	if sb.count == 0 {
		return 0
	}
	return int(sb.nxt - sb.Seg(0).Off)
}

// Pipe returns RFC 6675 pipe: bytes outstanding neither SACKed nor marked lost.
func (sb *Scoreboard) Pipe() int { return sb.pipe }

// SackedBytes returns bytes SACKed above Una.
func (sb *Scoreboard) SackedBytes() int { return sb.sacked }

// LostBytes returns bytes marked lost awaiting retransmission.
func (sb *Scoreboard) LostBytes() int { return sb.lost }

// HighSacked returns the highest SACKed offset (exclusive), or 0.
func (sb *Scoreboard) HighSacked() uint64 { return sb.highSck }

// HighSackedSendSeq returns the highest transmission order (Segment.SendSeq)
// of any never-retransmitted segment SACKed so far, or 0: a retransmission
// sent before it that is still un-SACKed was passed by later data
// (lost-retransmission detection). Retransmitted segments do not count, since
// their SACK may have been caused by an earlier transmission.
func (sb *Scoreboard) HighSackedSendSeq() uint64 { return sb.highSSq }

// Find returns the index of the outstanding segment containing offset off, or
// -1.
func (sb *Scoreboard) Find(off uint64) int {
	i := sort.Search(sb.count, func(i int) bool { return sb.Seg(i).End() > off })
	if i < sb.count && sb.Seg(i).Off <= off {
		return i
	}
	return -1
}

// NextLost returns the index of the first segment marked lost, or -1.
func (sb *Scoreboard) NextLost() int {
	if sb.lost == 0 && !sb.anyLostFin() {
		return -1
	}
	for i := sb.lostIdx; i < sb.count; i++ {
		if sb.Seg(i).Lost {
			sb.lostIdx = i
			return i
		}
	}
	sb.lostIdx = sb.count
	return -1
}

// anyLostFin covers the zero-length FIN segment, which lost does not count.
func (sb *Scoreboard) anyLostFin() bool {
	if sb.count == 0 {
		return false
	}
	s := sb.Seg(sb.count - 1)
	return s.Fin && s.Len == 0 && s.Lost
}

// release gives the segment buffer back to the pool (bufpool.go); only
// the buffer's contents are dropped, so it may be called only while no
// segment is outstanding. The next push takes a new one.
func (sb *Scoreboard) release() {
	if sb.segs != nil {
		sb.pool.putSegments(sb.segs)
		sb.segs, sb.head = nil, 0
	}
}

// push appends a newly sent segment.
func (sb *Scoreboard) push(s Segment) {
	if sb.count == len(sb.segs) {
		n := max(minSegs, 2*len(sb.segs))
		ns := sb.pool.segments(n)
		for i := 0; i < sb.count; i++ {
			ns[i] = *sb.Seg(i)
			ns[i].tsNext, ns[i].tsPrev = sb.moved(ns[i].tsNext), sb.moved(ns[i].tsPrev)
		}
		sb.tsHead, sb.tsTail = sb.moved(sb.tsHead), sb.moved(sb.tsTail)
		sb.release()
		sb.segs, sb.head = ns, 0
	}
	sb.sends++
	s.SendSeq = sb.sends
	p := sb.pos(sb.count)
	sb.segs[p-1] = s
	sb.count++
	sb.nxt = s.Off + uint64(s.Len)
	sb.pipe += s.Len
	sb.tsAppend(p)
}

// pos returns the ring position + 1 of segment i (a list link).
func (sb *Scoreboard) pos(i int) uint32 { return uint32((sb.head+i)&(len(sb.segs)-1)) + 1 }

// index returns the index of the segment at list link p.
func (sb *Scoreboard) index(p uint32) int { return (int(p) - 1 - sb.head) & (len(sb.segs) - 1) }

// at returns the segment at list link p (ring position + 1, not 0).
func (sb *Scoreboard) at(p uint32) *Segment { return &sb.segs[p-1] }

// moved returns list link p after push copied the ring into a new buffer
// with segment 0 at position 0.
func (sb *Scoreboard) moved(p uint32) uint32 {
	if p == 0 {
		return 0
	}
	return uint32((int(p)-1-sb.head)&(len(sb.segs)-1)) + 1
}

// tsAppend adds segment p (a link), just (re)sent, at the list's tail.
func (sb *Scoreboard) tsAppend(p uint32) {
	s := sb.at(p)
	s.tsPrev, s.tsNext = sb.tsTail, 0
	if sb.tsTail != 0 {
		sb.at(sb.tsTail).tsNext = p
	} else {
		sb.tsHead = p
	}
	sb.tsTail = p
}

// tsInsert adds segment p (a link) in SendSeq order, searching forward
// from after member `after` (0: from the head), which must have a smaller
// SendSeq.
func (sb *Scoreboard) tsInsert(p, after uint32) {
	s := sb.at(p)
	next := sb.tsHead
	if after != 0 {
		next = sb.at(after).tsNext
	}
	for next != 0 && sb.at(next).SendSeq < s.SendSeq {
		after, next = next, sb.at(next).tsNext
	}
	s.tsPrev, s.tsNext = after, next
	if after != 0 {
		sb.at(after).tsNext = p
	} else {
		sb.tsHead = p
	}
	if next != 0 {
		sb.at(next).tsPrev = p
	} else {
		sb.tsTail = p
	}
}

// tsRemove takes segment p (a link, a member) out of the list.
func (sb *Scoreboard) tsRemove(p uint32) {
	s := sb.at(p)
	if s.tsPrev != 0 {
		sb.at(s.tsPrev).tsNext = s.tsNext
	} else {
		sb.tsHead = s.tsNext
	}
	if s.tsNext != 0 {
		sb.at(s.tsNext).tsPrev = s.tsPrev
	} else {
		sb.tsTail = s.tsPrev
	}
	s.tsPrev, s.tsNext = 0, 0
}

// markLost marks segment i lost; it reports whether the mark is new.
func (sb *Scoreboard) markLost(i int) bool {
	s := sb.Seg(i)
	if s.Lost || s.Sacked {
		return false
	}
	s.Lost = true
	sb.lost += s.Len
	sb.pipe -= s.Len
	sb.tsRemove(sb.pos(i))
	if i < sb.lostIdx {
		sb.lostIdx = i
	}
	return true
}

// retransmitted records that segment i was sent again.
func (sb *Scoreboard) retransmitted(i int, now clock.Time, ts uint32) {
	p := sb.pos(i)
	s := sb.at(p)
	if s.Lost {
		s.Lost = false
		sb.lost -= s.Len
		sb.pipe += s.Len
	} else if !s.Sacked {
		sb.tsRemove(p) // sent again: it moves to the list's tail
	}
	// A segment retransmitted without a loss mark is still counted once.
	s.Retrans++
	sb.sends++
	s.SendSeq = sb.sends
	s.SentAt = now
	s.TS = ts
	if !s.Sacked {
		sb.tsAppend(p)
	}
}

// sack marks segments fully inside [start, end) as SACKed and calls fn for
// each newly SACKed one, in stream order. It returns the newly SACKed bytes.
// Runs of segments SACKed before are jumped over (pastSacked): an ACK's
// blocks mostly repeat what earlier ACKs reported.
func (sb *Scoreboard) sack(start, end uint64, fn func(*Segment)) int {
	i := sort.Search(sb.count, func(i int) bool { return sb.Seg(i).Off >= start })
	n := 0
	for i < sb.count {
		p := sb.pos(i)
		s := sb.at(p)
		if s.Sacked {
			// (Segment ends increase with the index: a jump past SACKed
			// segments ending beyond end still stops at one that does.)
			i = sb.pastSacked(i)
			continue
		}
		if s.End() > end {
			break
		}
		s.Sacked = true
		s.skip = 1
		i++
		switch {
		case s.Lost:
			s.Lost = false
			sb.lost -= s.Len
		case sb.holdRetx && s.Retrans > 0 && s.SendSeq > sb.rtoSends:
			s.held = true // in pipe until advance or releaseHeld
			sb.tsRemove(p)
		default:
			sb.pipe -= s.Len
			sb.tsRemove(p)
		}
		sb.sacked += s.Len
		n += s.Len
		if s.End() > sb.highSck {
			sb.highSck = s.End()
		}
		if s.Retrans == 0 && s.SendSeq > sb.highSSq {
			// Only never-retransmitted segments: the SACK of a
			// retransmitted one may be for an earlier transmission (Karn).
			sb.highSSq = s.SendSeq
		}
		fn(s)
	}
	return n
}

// pastSacked returns the index of the first segment after SACKed segment i
// that is not SACKed, or Count(). It follows the segments' skips (SACK
// marks are never removed and segments leave only from index 0, so a
// skip stays true) and shortens the path it took to one jump each (path
// compression), so that repeated walks over a long SACKed run cost O(1).
func (sb *Scoreboard) pastSacked(i int) int {
	j := i
	for j < sb.count {
		s := sb.Seg(j)
		if !s.Sacked {
			break
		}
		j += int(s.skip)
	}
	for k := i; k < j; {
		s := sb.Seg(k)
		next := k + int(s.skip)
		s.skip = uint32(j - k)
		k = next
	}
	return j
}

// advance removes segments wholly below the cumulative ack, calling fn for
// each (before removal). It returns the payload bytes newly acknowledged that
// were not SACKed before.
func (sb *Scoreboard) advance(cum uint64, fn func(*Segment)) int {
	n := 0
	for sb.count > 0 {
		s := sb.Seg(0)
		if s.End() > cum {
			break
		}
		switch {
		case s.Sacked:
			sb.sacked -= s.Len
			if s.held {
				sb.pipe -= s.Len
			}
		case s.Lost:
			sb.lost -= s.Len
			n += s.Len
		default:
			sb.pipe -= s.Len
			n += s.Len
			sb.tsRemove(sb.pos(0))
		}
		fn(s)
		sb.head = (sb.head + 1) & (len(sb.segs) - 1)
		sb.count--
		if sb.lostIdx > 0 {
			sb.lostIdx--
		}
	}
	if sb.count == 0 && sb.tsHead == 0 {
		// Empty (so is the transmission-ordered list): start the next
		// flight at the ring's first slot rather than where this one
		// ended. A connection whose flights are shorter than the ring
		// then keeps writing the same few slots, which stay in the
		// cache, instead of cycling through the whole buffer (64
		// segments of 104 bytes at least), every slot of which a
		// simulation of thousands of connections finds out of it.
		sb.head = 0
	}
	if cum > sb.una {
		sb.una = cum
	}
	return n
}

// releaseHeld takes the SACKed segments that holdRetx kept in pipe out of it,
// at a timeout: ns-3 3.37's TcpTxBuffer::SetSentListLost clears every
// retransmitted flag (m_retrans = 0). Retransmissions sent from now on are
// held again when SACKed.
func (sb *Scoreboard) releaseHeld() {
	sb.rtoSends = sb.sends
	a, b := sb.runs()
	for _, run := range [2][]Segment{a, b} {
		for i := range run {
			if s := &run[i]; s.held {
				s.held = false
				sb.pipe -= s.Len
			}
		}
	}
}
