//go:build !amd64

package transport

// useGHASH512 is false off amd64: sealer uses the standard library's
// AES-GCM for GMAC too.
const useGHASH512 = false

func ghashInit(h *[16]byte, tbl *[256]byte) { panic("transport: no wide GHASH on this architecture") }

func ghashBlocks(tbl *[256]byte, x *[16]byte, p []byte) {
	panic("transport: no wide GHASH on this architecture")
}
