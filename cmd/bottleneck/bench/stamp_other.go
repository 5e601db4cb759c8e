//go:build !linux

package main

import (
	"encoding/binary"

	"cclab/netio"
)

// arrivalReader reads the receiver child's socket; without kernel receive
// timestamps here, both stamps are the application's.
type arrivalReader struct {
	c      *netio.UDPConn
	ms     []netio.Message
	stamps bool
}

func newArrivalReader(c *netio.UDPConn, gro bool) *arrivalReader {
	n, bufSize := 64, 2048
	if gro {
		n, bufSize = 16, netio.GROBufSize
	}
	r := &arrivalReader{c: c, ms: make([]netio.Message, n)}
	for i := range r.ms {
		r.ms[i].Buf = make([]byte, bufSize)
	}
	return r
}

// read blocks for a batch and appends (application arrival, the same,
// sequence number) for every datagram of at least 16 bytes in it.
func (r *arrivalReader) read(rec []uint64) ([]uint64, error) {
	k, err := r.c.ReadBatch(r.ms)
	if err != nil {
		return rec, err
	}
	now := uint64(monotonic())
	for i := range r.ms[:k] {
		m := &r.ms[i]
		for j := range m.Count() {
			if d := m.Datagram(j); len(d) >= 16 {
				rec = append(rec, now, now, binary.BigEndian.Uint64(d[8:]))
			}
		}
	}
	return rec, nil
}
