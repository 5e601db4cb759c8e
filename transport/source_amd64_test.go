package transport

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// blockPaths names the block loop paths that this CPU can run: "avx2" (if
// it has AVX2; else tb logs that it is left out) and "sse2".
func blockPaths(tb testing.TB) []string {
	if !cpu.X86.HasAVX2 {
		tb.Logf("no AVX2 on this CPU: only the sse2 block loops are tested")
		return []string{"sse2"}
	}
	return []string{"avx2", "sse2"}
}

// selectBlockPath makes PatternSource run the named block loops (useAVX2)
// and returns the function that restores the previous choice.
func selectBlockPath(name string) (restore func()) {
	old := useAVX2
	useAVX2 = name == "avx2"
	return func() { useAVX2 = old }
}
