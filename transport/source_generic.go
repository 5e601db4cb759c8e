//go:build !amd64

package transport

// fillBlocks writes the whole blocks b, b+1, ... into p, len(p) a multiple
// of 64 (fillBlocksGeneric; amd64 has an assembly version).
func (s *PatternSource) fillBlocks(b uint64, p []byte) { s.fillBlocksGeneric(b, p) }

// equalBlocks reports whether p, len(p) a multiple of 64, holds the whole
// blocks b, b+1, ... (equalBlocksGeneric; amd64 has an assembly version).
func (s *PatternSource) equalBlocks(b uint64, p []byte) bool { return s.equalBlocksGeneric(b, p) }
