package transport

import (
	"encoding/binary"
	"errors"
	"time"

	"cclab/clock"
)

// StampLen is the length of the stamp a StampSource writes at the start of
// each datagram: an 8-byte application sequence number and an 8-byte
// generation time, bytes.
const StampLen = 16

// StampSource is a DgramSource whose datagrams carry an application
// sequence number and their generation time, so a DgramMeter at the
// receiver can measure loss, one-way delay and jitter. The time written is
// int64(now) + Offset nanoseconds: with Offset 0 it is project time (the
// simulator, where both ends share a clock); live senders set Offset so the
// stamp is Unix time in nanoseconds.
type StampSource struct {
	Size   int   // datagram size, bytes; 0: as large as fits (at least StampLen)
	Offset int64 // added to now, ns
	Seq    uint64
}

// Next writes the next stamped datagram.
func (s *StampSource) Next(now clock.Time, b []byte) int {
	n := len(b)
	if s.Size > 0 {
		n = min(n, max(s.Size, StampLen))
	}
	if n < StampLen {
		return -1
	}
	binary.BigEndian.PutUint64(b, s.Seq)
	binary.BigEndian.PutUint64(b[8:], uint64(int64(now)+s.Offset))
	s.Seq++
	return n
}

// ErrShortStamp is returned by DgramMeter.Add for a datagram shorter than
// StampLen.
var ErrShortStamp = errors.New("transport: datagram shorter than a stamp")

// DgramMeter measures stamped datagrams at the receiver: count and bytes,
// missing application sequence numbers (network loss plus datagrams the
// sender's queue dropped), one-way delay (receive time minus generation
// time; meaningful when both clocks agree: the simulator, one host, or
// synchronized hosts) and interarrival jitter as RFC 3550 §6.4.1 defines it
// (independent of a clock offset).
type DgramMeter struct {
	Offset int64 // added to the receive time, ns (see StampSource.Offset)

	Received uint64 // datagrams
	Bytes    uint64 // payload bytes
	Missing  uint64 // application sequence numbers never seen (gaps; a late arrival fills one)
	Late     uint64 // datagrams arriving after a higher sequence number
	Bad      uint64 // datagrams too short to carry a stamp

	DelaySum, DelayMin, DelayMax time.Duration // one-way delay
	Jitter                       time.Duration // RFC 3550 interarrival jitter estimate

	next      uint64 // next expected sequence number
	any       bool
	lastTrans int64 // transit time of the previous datagram, ns
}

// Add accounts one received datagram.
func (m *DgramMeter) Add(now clock.Time, b []byte) error {
	if len(b) < StampLen {
		m.Bad++
		return ErrShortStamp
	}
	seq := binary.BigEndian.Uint64(b)
	sent := int64(binary.BigEndian.Uint64(b[8:]))
	m.Received++
	m.Bytes += uint64(len(b))
	switch {
	case !m.any || seq >= m.next:
		if m.any {
			m.Missing += seq - m.next
		} else {
			m.Missing += seq // datagrams before the first one received
		}
		m.next = seq + 1
	default:
		m.Late++
		if m.Missing > 0 {
			m.Missing--
		}
	}
	transit := int64(now) + m.Offset - sent
	d := time.Duration(transit)
	if m.Received == 1 {
		m.DelayMin, m.DelayMax = d, d
	} else {
		// RFC 3550 §6.4.1: J += (|D(i-1,i)| - J)/16.
		dd := transit - m.lastTrans
		if dd < 0 {
			dd = -dd
		}
		m.Jitter += (time.Duration(dd) - m.Jitter) / 16
		m.DelayMin = min(m.DelayMin, d)
		m.DelayMax = max(m.DelayMax, d)
	}
	m.lastTrans = transit
	m.any = true
	m.DelaySum += d
	return nil
}

// MeanDelay returns the mean one-way delay.
func (m *DgramMeter) MeanDelay() time.Duration {
	if m.Received == 0 {
		return 0
	}
	return m.DelaySum / time.Duration(m.Received)
}
