package transport

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
)

// gmac computes the authenticated path's default tag, AES-128-GMAC of a
// whole packet (AES-128-GCM with the packet as the associated data and an
// empty plaintext, NIST SP 800-38D §3 and §7.1), without cipher.AEAD where
// the CPU has a wider carry-less multiply than the standard library uses
// (useGHASH512, gmac_amd64.go): the same tag, bit for bit, from a GHASH that
// folds sixteen blocks a step instead of eight. GHASH over every byte at
// both ends was the authenticated transfer's main cost (docs/benchmark.md,
// "Authenticated data path"). Without it, sealer keeps cipher.AEAD.
type gmac struct {
	block cipher.Block
	tbl   [256]byte // H^16 ... H^1 (ghashInit)
	j0    [16]byte  // scratch: the pre-counter block, nonce || 1 (SP 800-38D §7.1 step 2)
	mask  [16]byte  // scratch: E_K(J0)
}

// init keys g with the AES block cipher b: H = E_K(0^128).
func (g *gmac) init(b cipher.Block) {
	g.block = b
	var h [16]byte
	b.Encrypt(g.mask[:], h[:])
	h = g.mask
	ghashInit(&h, &g.tbl)
}

// tag writes to t the GMAC of data under the 12-byte nonce: GHASH of data
// zero-padded to whole blocks and of the length block (len(A) in bits,
// len(C) = 0), XORed with E_K(J0).
func (g *gmac) tag(t *[TagLen]byte, nonce []byte, data []byte) {
	var x [16]byte
	var last [32]byte // the partial block, if any, then the length block
	whole := len(data) &^ 15
	ghashBlocks(&g.tbl, &x, data[:whole])
	k := copy(last[:], data[whole:])
	k = (k + 15) &^ 15
	binary.BigEndian.PutUint64(last[k:], uint64(len(data))*8)
	ghashBlocks(&g.tbl, &x, last[:k+16])
	copy(g.j0[:], nonce)
	g.j0[12], g.j0[13], g.j0[14], g.j0[15] = 0, 0, 0, 1
	g.block.Encrypt(g.mask[:], g.j0[:])
	for i := range t {
		t[i] = x[15-i] ^ g.mask[i] // x is kept byte-reversed
	}
}

// verify reports whether tag is the GMAC of data under nonce, in constant
// time.
func (g *gmac) verify(tag, nonce, data []byte) bool {
	var t [TagLen]byte
	g.tag(&t, nonce, data)
	return subtle.ConstantTimeCompare(t[:], tag) == 1
}
