package transport

import "encoding/binary"

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

// putVarint writes v at b[0:] and returns the bytes written; b must have
// room for varintLen(v) bytes. (One big-endian store per length: small
// enough to be inlined into the encoders.)
func putVarint(b []byte, v uint64) int {
	switch {
	case v < 1<<6:
		b[0] = byte(v)
		return 1
	case v < 1<<14:
		binary.BigEndian.PutUint16(b, uint16(v)|0x4000)
		return 2
	case v < 1<<30:
		binary.BigEndian.PutUint32(b, uint32(v)|0x8000_0000)
		return 4
	}
	binary.BigEndian.PutUint64(b, v|0xc0<<56)
	return 8
}

// getVarint decodes a varint from b and returns it and its length; n == 0
// means b is too short. (One load per length, no loop over the bytes.)
func getVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0]), 1
	case 1:
		if len(b) < 2 {
			return 0, 0
		}
		return uint64(binary.BigEndian.Uint16(b)) & (1<<14 - 1), 2
	case 2:
		if len(b) < 4 {
			return 0, 0
		}
		return uint64(binary.BigEndian.Uint32(b)) & (1<<30 - 1), 4
	}
	if len(b) < 8 {
		return 0, 0
	}
	return binary.BigEndian.Uint64(b) & MaxVarint, 8
}

// varintAt decodes the varint at b[off:] and returns it and the offset
// after it; a negative off in or out means truncated. With 8 bytes left it
// makes one 8-byte load whatever the length (the two high bits give it,
// the value is the top n bytes without them), else getVarint.
func varintAt(b []byte, off int) (v uint64, next int) {
	if off >= 0 && off <= len(b)-8 {
		w := binary.BigEndian.Uint64(b[off:])
		l := w >> 62 // log2 of the length
		return w << 2 >> ((66 - 8<<l) & 63), off + 1<<l
	}
	return varintShort(b, off)
}

// varintShort is varintAt near the end of b.
func varintShort(b []byte, off int) (uint64, int) {
	if off < 0 || off > len(b) {
		return 0, -1
	}
	v, n := getVarint(b[off:])
	if n == 0 {
		return 0, -1
	}
	return v, off + n
}
