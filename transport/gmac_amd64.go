package transport

import "golang.org/x/sys/cpu"

// useGHASH512 selects gmac's sixteen-block GHASH (gmac_amd64.s: VPCLMULQDQ
// on 512-bit registers) for GMAC packets; without these features, and with
// encryption, sealer uses the standard library's AES-GCM. Tests clear it to
// compare both.
var useGHASH512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VPCLMULQDQ &&
	cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSSE3 && cpu.X86.HasAVX2

// ghashInit fills tbl with the powers H^16 ... H^1 of the hash key h =
// E_K(0^128), in the form ghashBlocks multiplies by.
func ghashInit(h *[16]byte, tbl *[256]byte) { ghashInitAVX512(h, tbl) }

// ghashBlocks absorbs the len(p)/16 whole blocks of p into the running hash
// x (byte-reversed, as the assembly keeps it).
func ghashBlocks(tbl *[256]byte, x *[16]byte, p []byte) { ghashBlocksAVX512(tbl, x, p) }

//go:noescape
func ghashInitAVX512(h *[16]byte, tbl *[256]byte)

//go:noescape
func ghashBlocksAVX512(tbl *[256]byte, x *[16]byte, p []byte)
