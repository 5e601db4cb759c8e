package main

import (
	"encoding/binary"
	"time"

	"cclab/netio"
)

// arrivalReader reads the receiver child's socket and stamps each datagram
// twice: when the receiving application got it (CLOCK_MONOTONIC after the
// read returned) and when the kernel received it (netio's receive
// timestamps, SO_TIMESTAMPNS, taken as the datagram entered the receiving
// socket's stack, mapped onto CLOCK_MONOTONIC). The difference is the
// receiver's own wake-up and read latency, which is not the relay's error.
// Where the kernel does not stamp datagrams, both stamps are the
// application's.
type arrivalReader struct {
	c      *netio.UDPConn
	ms     []netio.Message
	offset time.Duration // CLOCK_REALTIME − CLOCK_MONOTONIC
	stamps bool          // the kernel stamps datagrams
}

func newArrivalReader(c *netio.UDPConn, gro bool) *arrivalReader {
	n, bufSize := 64, 2048
	if gro {
		n, bufSize = 16, netio.GROBufSize
	}
	r := &arrivalReader{c: c, ms: make([]netio.Message, n), stamps: netio.EnableRxTimestamps(c)}
	for i := range r.ms {
		r.ms[i].Buf = make([]byte, bufSize)
	}
	r.offset = time.Duration(time.Now().UnixNano()) - monotonic()
	return r
}

// read blocks for a batch and appends (application arrival, kernel
// arrival, sequence number) for every datagram of at least 16 bytes in it
// (splitting GRO reads into their datagrams).
func (r *arrivalReader) read(rec []uint64) ([]uint64, error) {
	k, err := r.c.ReadBatch(r.ms)
	if err != nil {
		return rec, err
	}
	app := uint64(monotonic())
	for i := range r.ms[:k] {
		m := &r.ms[i]
		kern := app
		if m.RxTime != 0 {
			kern = uint64(time.Duration(m.RxTime) - r.offset)
		}
		for j := range m.Count() {
			if d := m.Datagram(j); len(d) >= 16 {
				rec = append(rec, app, kern, binary.BigEndian.Uint64(d[8:]))
			}
		}
	}
	return rec, nil
}
