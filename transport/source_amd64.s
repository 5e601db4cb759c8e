#include "textflag.h"

// PatternSource's block loops (source_amd64.go declares them; the Go
// definitions are fillBlocksGeneric and equalBlocksGeneric in source.go).
//
// Block j of p (64 bytes) holds eight little-endian words, word i being
// m XOR key[i] with m = mix(x), x = x0 + j*golden, and
//	mix(x) = hi XOR lo, where hi:lo = (x XOR seed) * mixK (128-bit product).
// The loops compute m with one MULQ, broadcast it to every 8-byte lane of a
// vector register and XOR it with the keys, which stay in vector registers:
// key[0..3] in the low and key[4..7] in the high register (AVX2: two 32-byte
// YMM), or key[0,1], key[2,3], key[4,5], key[6,7] (SSE2: four 16-byte XMM).
// amd64 is little-endian, so a lane's 8 bytes in memory are the word's
// little-endian bytes, as binary.LittleEndian writes them.
//
// Registers (all four functions):
//	SI  key (pointer to [8]uint64)
//	R8  seed
//	R9  x, the current block's b*golden
//	DI  the current block in p
//	CX  blocks left: len(p)/64 (bytes past the last whole block are ignored)
//	R10 mixK, R11 golden (MULQ and ADDQ take no 64-bit immediate)
//	AX, DX  the product of MULQ, then m in AX

// MIXK is wyhash's secret[1], GOLDEN the golden-ratio increment of
// splitmix64: source.go's mixK and golden.
#define MIXK $0xe7037ed1a0b428db
#define GOLDEN $0x9e3779b97f4a7c15

// MIX sets AX = mix(R9) = hi XOR lo of (R9 XOR R8) * R10; clobbers DX.
#define MIX \
	MOVQ R9, AX  \ // AX = x
	XORQ R8, AX  \ // AX = x ^ seed
	MULQ R10     \ // DX:AX = AX * mixK (unsigned 128-bit product)
	XORQ DX, AX    // AX = hi ^ lo = m

// LOADARGS loads the arguments into the registers above and sets CX to the
// number of whole blocks.
#define LOADARGS \
	MOVQ key+0(FP), SI    \
	MOVQ seed+8(FP), R8   \
	MOVQ x+16(FP), R9     \
	MOVQ p_base+24(FP), DI \
	MOVQ p_len+32(FP), CX \
	SHRQ $6, CX           \ // CX = len(p) / 64
	MOVQ MIXK, R10        \
	MOVQ GOLDEN, R11

// KEYSAVX2 loads key[0..3] into Y1 and key[4..7] into Y2.
#define KEYSAVX2 \
	VMOVDQU 0(SI), Y1 \
	VMOVDQU 32(SI), Y2

// MAVX2 sets Y0 = m = mix(R9) in all four 8-byte lanes; clobbers AX, DX.
#define MAVX2 \
	MIX                 \
	VMOVQ AX, X0        \ // X0 lane 0 = m (VEX: no legacy-SSE write amid dirty YMM state)
	VPBROADCASTQ X0, Y0   // Y0 = m in all four lanes

// KEYSSSE2 loads key[0,1], key[2,3], key[4,5], key[6,7] into X1..X4.
#define KEYSSSE2 \
	MOVOU 0(SI), X1  \
	MOVOU 16(SI), X2 \
	MOVOU 32(SI), X3 \
	MOVOU 48(SI), X4

// MSSE2 sets X0 = m = mix(R9) in both 8-byte lanes; clobbers AX, DX.
#define MSSE2 \
	MIX               \
	MOVQ AX, X0       \ // X0 = [m, 0]
	PUNPCKLQDQ X0, X0   // X0 = [m, m]

// func fillBlocksAVX2(key *[8]uint64, seed, x uint64, p []byte)
TEXT ·fillBlocksAVX2(SB), NOSPLIT, $0-48
	LOADARGS
	TESTQ CX, CX
	JZ    fillavx2done
	KEYSAVX2

fillavx2loop:
	MAVX2
	VPXOR Y0, Y1, Y3   // Y3 = key[0..3] ^ m: words 0..3
	VPXOR Y0, Y2, Y4   // Y4 = key[4..7] ^ m: words 4..7
	VMOVDQU Y3, 0(DI)  // store bytes 0..31 of the block
	VMOVDQU Y4, 32(DI) // store bytes 32..63
	ADDQ $64, DI       // next block
	ADDQ R11, R9       // x += golden
	DECQ CX
	JNZ  fillavx2loop
	VZEROUPPER         // leave no dirty upper YMM state (SSE transition penalty)

fillavx2done:
	RET

// func fillBlocksSSE2(key *[8]uint64, seed, x uint64, p []byte)
TEXT ·fillBlocksSSE2(SB), NOSPLIT, $0-48
	LOADARGS
	TESTQ CX, CX
	JZ    fillsse2done
	KEYSSSE2

fillsse2loop:
	MSSE2
	MOVO X1, X5
	PXOR X0, X5        // X5 = words 0,1
	MOVOU X5, 0(DI)
	MOVO X2, X5
	PXOR X0, X5        // words 2,3
	MOVOU X5, 16(DI)
	MOVO X3, X5
	PXOR X0, X5        // words 4,5
	MOVOU X5, 32(DI)
	MOVO X4, X5
	PXOR X0, X5        // words 6,7
	MOVOU X5, 48(DI)
	ADDQ $64, DI       // next block
	ADDQ R11, R9       // x += golden
	DECQ CX
	JNZ  fillsse2loop

fillsse2done:
	RET

// func equalBlocksAVX2(key *[8]uint64, seed, x uint64, p []byte) bool
//
// Y5 gathers (loaded bytes XOR expected bytes) of every block by OR: p holds
// the blocks exactly if Y5 ends all zero.
TEXT ·equalBlocksAVX2(SB), NOSPLIT, $0-49
	LOADARGS
	VPXOR   Y5, Y5, Y5 // Y5 = 0, the differences so far
	TESTQ   CX, CX
	JZ      equalavx2done
	KEYSAVX2

equalavx2loop:
	MAVX2
	VPXOR Y0, Y1, Y3     // Y3 = expected words 0..3
	VPXOR Y0, Y2, Y4     // Y4 = expected words 4..7
	VPXOR 0(DI), Y3, Y3  // Y3 = bytes 0..31 XOR expected (VEX allows unaligned memory operands)
	VPXOR 32(DI), Y4, Y4 // Y4 = bytes 32..63 XOR expected
	VPOR  Y3, Y5, Y5     // gather the differences
	VPOR  Y4, Y5, Y5
	ADDQ  $64, DI        // next block
	ADDQ  R11, R9        // x += golden
	DECQ  CX
	JNZ   equalavx2loop

equalavx2done:
	VPTEST Y5, Y5       // ZF = (Y5 == 0)
	SETEQ  ret+48(FP)   // equal iff no difference
	VZEROUPPER
	RET

// func equalBlocksSSE2(key *[8]uint64, seed, x uint64, p []byte) bool
//
// X8 gathers the differences as Y5 does in equalBlocksAVX2. Legacy SSE
// instructions fault on unaligned memory operands, so p's bytes are loaded
// with MOVOU first.
TEXT ·equalBlocksSSE2(SB), NOSPLIT, $0-49
	LOADARGS
	PXOR  X8, X8     // X8 = 0, the differences so far
	TESTQ CX, CX
	JZ    equalsse2done
	KEYSSSE2

equalsse2loop:
	MSSE2
	MOVOU 0(DI), X5    // bytes 0..15
	PXOR X1, X5
	PXOR X0, X5        // X5 = bytes XOR words 0,1
	POR  X5, X8        // gather the difference
	MOVOU 16(DI), X5   // bytes 16..31 against words 2,3
	PXOR X2, X5
	PXOR X0, X5
	POR  X5, X8
	MOVOU 32(DI), X5   // bytes 32..47 against words 4,5
	PXOR X3, X5
	PXOR X0, X5
	POR  X5, X8
	MOVOU 48(DI), X5   // bytes 48..63 against words 6,7
	PXOR X4, X5
	PXOR X0, X5
	POR  X5, X8
	ADDQ $64, DI       // next block
	ADDQ R11, R9       // x += golden
	DECQ CX
	JNZ  equalsse2loop

equalsse2done:
	MOVQ X8, AX        // AX = low 8 bytes of the differences
	PUNPCKHQDQ X8, X8  // X8 = [high, high]
	MOVQ X8, DX        // DX = high 8 bytes
	ORQ  DX, AX        // ZF = (AX|DX == 0)
	SETEQ ret+48(FP)   // equal iff no difference
	RET
