package transport

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 block loops (two 32-byte registers a block) over
// the SSE2 ones (four 16-byte registers), which every amd64 CPU has. Tests
// clear it to run the SSE2 path on an AVX2 machine.
var useAVX2 = cpu.X86.HasAVX2

// fillBlocks writes the whole blocks b, b+1, ... into p, len(p) a multiple
// of 64: fillBlocksGeneric's bytes, in assembly (source_amd64.s).
func (s *PatternSource) fillBlocks(b uint64, p []byte) {
	if useAVX2 {
		fillBlocksAVX2(&s.key, s.seed, b*golden, p)
	} else {
		fillBlocksSSE2(&s.key, s.seed, b*golden, p)
	}
}

// equalBlocks reports whether p, len(p) a multiple of 64, holds the whole
// blocks b, b+1, ...: equalBlocksGeneric's answer, in assembly.
func (s *PatternSource) equalBlocks(b uint64, p []byte) bool {
	if useAVX2 {
		return equalBlocksAVX2(&s.key, s.seed, b*golden, p)
	}
	return equalBlocksSSE2(&s.key, s.seed, b*golden, p)
}

// The assembly block loops (source_amd64.s). Each takes the stream's keys and
// seed, x = b*golden for the first block b, and p, whose len(p)/64 whole
// blocks it writes (fill) or checks (equal; bytes past the last whole block
// are ignored, as by the Go loops). Block j's word i is mix(x+j*golden) XOR
// key[i], mix as PatternSource.mix.

//go:noescape
func fillBlocksAVX2(key *[8]uint64, seed, x uint64, p []byte)

//go:noescape
func fillBlocksSSE2(key *[8]uint64, seed, x uint64, p []byte)

//go:noescape
func equalBlocksAVX2(key *[8]uint64, seed, x uint64, p []byte) bool

//go:noescape
func equalBlocksSSE2(key *[8]uint64, seed, x uint64, p []byte) bool
