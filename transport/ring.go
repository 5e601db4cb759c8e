package transport

// byteRing stores stream bytes by absolute offset in a power-of-two ring that
// grows on demand (amortized; no allocation in steady state). Its buffers come
// from and return to pool (bufpool.go; nil: freshly allocated).
type byteRing struct {
	b    []byte
	pool *Buffers
	// stamps: write stores only the bytes of SampledSource's stamps (those
	// at offsets k·SampleStride to k·SampleStride+7) and leaves the others
	// as they were; set while the receive ring's only reader is a
	// StampConsumer (Conn.SetConsumer).
	stamps bool
}

// ensure makes room for span bytes starting at base, preserving the bytes
// [base, base+keep).
func (r *byteRing) ensure(base uint64, keep, span int) {
	if span <= len(r.b) {
		return
	}
	n := max(minRing, len(r.b))
	for n < span {
		n *= 2
	}
	nb := r.pool.ring(n)
	if keep > 0 {
		tmp := byteRing{b: nb, stamps: r.stamps}
		for off := base; off < base+uint64(keep); {
			i := int(off & uint64(len(r.b)-1))
			m := min(len(r.b)-i, int(base+uint64(keep)-off))
			tmp.write(off, r.b[i:i+m])
			off += uint64(m)
		}
	}
	r.release()
	r.b = nb
}

// release gives the ring's buffer back to the pool (bufpool.go); the ring
// must hold no bytes still needed. The next ensure takes a new one.
func (r *byteRing) release() {
	if r.b != nil {
		r.pool.putRing(r.b)
		r.b = nil
	}
}

// write copies p to offset off (with stamps set, only the stamps' bytes).
func (r *byteRing) write(off uint64, p []byte) {
	if r.stamps {
		r.writeStamps(off, p)
		return
	}
	r.writeAll(off, p)
}

// writeStamps copies the bytes of p, the stream bytes at [off,
// off+len(p)), that belong to SampledSource's stamps to their offsets: two
// or three 8-byte stores for a full-sized segment instead of a copy that
// reads every cache line of the datagram and writes as many of the ring.
func (r *byteRing) writeStamps(off uint64, p []byte) {
	end := off + uint64(len(p))
	for o := off &^ (SampleStride - 1); o < end; o += SampleStride {
		if a, b := max(o, off), min(o+8, end); a < b {
			r.writeAll(a, p[a-off:b-off])
		}
	}
}

// writeAll copies p to offset off.
func (r *byteRing) writeAll(off uint64, p []byte) {
	mask := uint64(len(r.b) - 1)
	for len(p) > 0 {
		i := int(off & mask)
		n := copy(r.b[i:], p)
		p = p[n:]
		off += uint64(n)
	}
}

// read copies the bytes at offset off into p.
func (r *byteRing) read(off uint64, p []byte) {
	mask := uint64(len(r.b) - 1)
	for len(p) > 0 {
		i := int(off & mask)
		n := copy(p, r.b[i:])
		p = p[n:]
		off += uint64(n)
	}
}

// slices returns the ring's bytes [off, off+n) as up to two slices.
func (r *byteRing) slices(off uint64, n int) ([]byte, []byte) {
	i := int(off & uint64(len(r.b)-1))
	if i+n <= len(r.b) {
		return r.b[i : i+n], nil
	}
	return r.b[i:], r.b[:n-(len(r.b)-i)]
}
