#include "textflag.h"

// GHASH for the authenticated path's GMAC (gmac.go), sixteen blocks a step
// with VPCLMULQDQ on 512-bit registers. The field arithmetic is the Go
// standard library's (crypto/internal/fips140/aes/gcm/gcm_amd64.s): blocks
// byte-reversed, the hash key doubled ("H * 2") so that a carry-less product
// needs no bit-reflection, and the same two-step reduction by gcmPoly. A step
// multiplies block j of the sixteen by H^(16-j) and the running hash by H^16,
// sums the unreduced products and reduces once (aggregated reduction, as the
// library's eight-block loop).

// CLMUL4 puts the four carry-less products of the 128-bit A and H in LO
// (lo*lo), HI (hi*hi), M1 and M2 (the cross terms).
#define CLMUL4(H, A, LO, HI, M1, M2) \
	VPCLMULQDQ $0x00, H, A, LO \
	VPCLMULQDQ $0x11, H, A, HI \
	VPCLMULQDQ $0x01, H, A, M1 \
	VPCLMULQDQ $0x10, H, A, M2

// PRODUCTS4 adds the lo, hi and Karatsuba middle carry-less products of the
// four blocks in D by the four powers in H (K: each power's lo^hi) to Z4, Z5
// and Z6 (Z9-Z11 clobbered); the sum's middle term is Z6^Z4^Z5.
#define PRODUCTS4(H, K, D) \
	VPCLMULQDQ $0x00, H, D, Z9  \
	VPCLMULQDQ $0x11, H, D, Z10 \
	VPSHUFD    $0x4e, D, Z11    \
	VPXORQ     D, Z11, Z11      \
	VPCLMULQDQ $0x00, K, Z11, Z11 \
	VPXORQ     Z9, Z4, Z4       \
	VPXORQ     Z10, Z5, Z5      \
	VPXORQ     Z11, Z6, Z6

// REDUCE folds the middle product X6 into lo X4 and hi X5 and reduces lo
// by gcmPoly (X14) twice, as the library's dataMul; the caller XORs X5 in.
#define REDUCE \
	VPSLLDQ    $8, X6, X9       \
	VPSRLDQ    $8, X6, X6       \
	VPXOR      X9, X4, X4       \
	VPXOR      X6, X5, X5       \
	VPCLMULQDQ $0x01, X4, X14, X9 \
	VPSHUFD    $0x4e, X4, X4    \
	VPXOR      X9, X4, X4       \
	VPCLMULQDQ $0x01, X4, X14, X9 \
	VPSHUFD    $0x4e, X4, X4    \
	VPXOR      X9, X4, X4

DATA gmacBswap<>+0(SB)/8, $0x08090a0b0c0d0e0f
DATA gmacBswap<>+8(SB)/8, $0x0001020304050607
GLOBL gmacBswap<>(SB), RODATA|NOPTR, $16

DATA gmacPoly<>+0(SB)/8, $0x0000000000000001
DATA gmacPoly<>+8(SB)/8, $0xc200000000000000
GLOBL gmacPoly<>(SB), RODATA|NOPTR, $16

// func ghashInitAVX512(h *[16]byte, tbl *[256]byte)
// h is E_K(0^128); tbl gets H^16, H^15, ..., H^1 (16 bytes each, in the
// doubled, byte-reversed form), so that tbl[64i:64i+64] is the lane-ordered
// multiplier of step block 4i..4i+3.
TEXT ·ghashInitAVX512(SB), NOSPLIT, $0-16
	MOVQ  h+0(FP), SI
	MOVQ  tbl+8(FP), DI
	MOVOU gmacBswap<>+0(SB), X15
	MOVOU gmacPoly<>+0(SB), X14
	MOVOU (SI), X0
	PSHUFB X15, X0

	// H * 2 (the library's gcmAesInit)
	PSHUFD $0xff, X0, X11
	MOVOU  X0, X12
	PSRAL  $0x1f, X11
	PAND   X14, X11
	PSRLL  $0x1f, X12
	PSLLDQ $0x04, X12
	PSLLL  $0x01, X0
	PXOR   X11, X0
	PXOR   X12, X0

	MOVOU  X0, 240(DI)
	PSHUFD $0x4e, X0, X1
	PXOR   X0, X1 // Karatsuba: H.lo^H.hi
	MOVOU  X0, X2 // the power so far
	LEAQ   224(DI), DI
	MOVQ   $15, AX

initLoop:
	// X2 = X2 * H (Karatsuba and reduction as the library's initLoop)
	MOVOU     X2, X11
	MOVOU     X2, X12
	PSHUFD    $0x4e, X2, X13
	PXOR      X2, X13
	PCLMULQDQ $0x00, X0, X11
	PCLMULQDQ $0x11, X0, X12
	PCLMULQDQ $0x00, X1, X13
	PXOR      X11, X13
	PXOR      X12, X13
	MOVOU     X13, X4
	PSLLDQ    $0x08, X4
	PSRLDQ    $0x08, X13
	PXOR      X4, X11
	PXOR      X13, X12
	MOVOU     X14, X2
	PCLMULQDQ $0x01, X11, X2
	PSHUFD    $0x4e, X11, X11
	PXOR      X2, X11
	MOVOU     X14, X2
	PCLMULQDQ $0x01, X11, X2
	PSHUFD    $0x4e, X11, X11
	PXOR      X11, X2
	PXOR      X12, X2
	MOVOU     X2, (DI)
	LEAQ      -16(DI), DI
	DECQ      AX
	JNE       initLoop
	RET

// func ghashBlocksAVX512(tbl *[256]byte, x *[16]byte, p []byte)
// x (the running hash, in the doubled byte-reversed form) absorbs the
// len(p)/16 whole blocks of p.
TEXT ·ghashBlocksAVX512(SB), NOSPLIT, $0-40
	MOVQ tbl+0(FP), DI
	MOVQ x+8(FP), CX
	MOVQ p_base+16(FP), SI
	MOVQ p_len+24(FP), DX
	ANDQ $-16, DX // whole blocks only
	VMOVDQU (CX), X8 // VEX: the upper lanes of Z8 are zero
	VBROADCASTI32X4 gmacBswap<>+0(SB), Z15
	VMOVDQU gmacPoly<>+0(SB), X14
	CMPQ DX, $256
	JB   singles
	VMOVDQU64 (DI), Z16
	VMOVDQU64 64(DI), Z17
	VMOVDQU64 128(DI), Z18
	VMOVDQU64 192(DI), Z19
	VMOVDQU   (DI), X13 // H^16, for the running hash
	VPSHUFD   $0x4e, Z16, Z20
	VPSHUFD   $0x4e, Z17, Z21
	VPSHUFD   $0x4e, Z18, Z22
	VPSHUFD   $0x4e, Z19, Z23
	VPXORQ    Z16, Z20, Z20
	VPXORQ    Z17, Z21, Z21
	VPXORQ    Z18, Z22, Z22
	VPXORQ    Z19, Z23, Z23

loop16:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPSHUFB   Z15, Z0, Z0
	VPSHUFB   Z15, Z1, Z1
	VPSHUFB   Z15, Z2, Z2
	VPSHUFB   Z15, Z3, Z3

	// Z4 lo, Z5 hi, Z6 Karatsuba middle products, summed over the 16 blocks
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	PRODUCTS4(Z16, Z20, Z0)
	PRODUCTS4(Z17, Z21, Z1)
	PRODUCTS4(Z18, Z22, Z2)
	PRODUCTS4(Z19, Z23, Z3)

	// the four lanes of each sum into one
	VEXTRACTI64X4 $1, Z4, Y9
	VEXTRACTI64X4 $1, Z5, Y10
	VEXTRACTI64X4 $1, Z6, Y11
	VPXOR         Y9, Y4, Y4
	VPXOR         Y10, Y5, Y5
	VPXOR         Y11, Y6, Y6
	VEXTRACTI128  $1, Y4, X9
	VEXTRACTI128  $1, Y5, X10
	VEXTRACTI128  $1, Y6, X11
	VPXOR         X9, X4, X4
	VPXOR         X10, X5, X5
	VPXOR         X11, X6, X6
	VPXOR         X4, X6, X6 // Karatsuba: the middle term proper
	VPXOR         X5, X6, X6

	// the running hash times H^16 (block 0's share, computed apart so
	// that the chain from one step's hash to the next is short)
	CLMUL4(X13, X8, X9, X10, X11, X12)
	VPXOR      X9, X4, X4
	VPXOR      X10, X5, X5
	VPXOR      X11, X6, X6
	VPXOR      X12, X6, X6

	// middle into lo and hi, then reduce
	REDUCE
	VPXOR      X5, X4, X8 // VEX: clears Z8's upper lanes again

	ADDQ $256, SI
	SUBQ $256, DX
	CMPQ DX, $256
	JAE  loop16

singles:
	// the last m < 16 blocks: block j times H^(m-j), the running hash
	// times H^m, one reduction (R8 walks the table from H^m to H)
	CMPQ       DX, $16
	JB         done
	LEAQ       256(DI), R8
	SUBQ       DX, R8
	VMOVDQU    (R8), X12
	CLMUL4(X12, X8, X4, X5, X6, X7)
	VPXOR      X7, X6, X6

tailLoop:
	VMOVDQU    (SI), X0
	VPSHUFB    X15, X0, X0
	VMOVDQU    (R8), X12
	CLMUL4(X12, X0, X9, X10, X11, X7)
	VPXOR      X9, X4, X4
	VPXOR      X10, X5, X5
	VPXOR      X11, X6, X6
	VPXOR      X7, X6, X6
	ADDQ       $16, SI
	ADDQ       $16, R8
	SUBQ       $16, DX
	CMPQ       DX, $16
	JAE        tailLoop
	REDUCE
	VPXOR      X5, X4, X8

done:
	VMOVDQU X8, (CX)
	VZEROUPPER
	RET
