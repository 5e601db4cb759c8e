package transport

// QUIC variable-length integers (RFC 9000 §16): the two high bits of the first
// byte give the length (1, 2, 4 or 8 bytes), the rest is the value, big-endian.

// MaxVarint is the largest value a varint can carry, 2^62-1 (RFC 9000 §16).
const MaxVarint = 1<<62 - 1

// varintLen returns the encoded length of v, bytes (v must be <= MaxVarint).
func varintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	}
	return 8
}

// appendVarint writes v at b[0:] and returns the bytes written; b must have
// room for varintLen(v) bytes.
func putVarint(b []byte, v uint64) int {
	switch {
	case v < 1<<6:
		b[0] = byte(v)
		return 1
	case v < 1<<14:
		b[0] = byte(v>>8) | 0x40
		b[1] = byte(v)
		return 2
	case v < 1<<30:
		b[0] = byte(v>>24) | 0x80
		b[1] = byte(v >> 16)
		b[2] = byte(v >> 8)
		b[3] = byte(v)
		return 4
	}
	b[0] = byte(v>>56) | 0xc0
	b[1] = byte(v >> 48)
	b[2] = byte(v >> 40)
	b[3] = byte(v >> 32)
	b[4] = byte(v >> 24)
	b[5] = byte(v >> 16)
	b[6] = byte(v >> 8)
	b[7] = byte(v)
	return 8
}

// getVarint decodes a varint from b and returns it and its length; n == 0
// means b is too short.
func getVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, n
}
