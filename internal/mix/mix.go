// Package mix holds the SplitMix64 finalizer, the one 64-bit integer hash
// cclab uses for flow keys and seed derivation.
package mix

// Golden is the 64-bit golden-ratio increment of SplitMix64, ⌊2^64/φ⌋
// (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014).
const Golden = 0x9e3779b97f4a7c15

// SplitMix64 is the SplitMix64 finalizer (Steele, Lea & Flood, OOPSLA 2014):
// it adds Golden and scrambles the result with the MurmurHash3-style
// xor-shift-multiply steps. It is a bijection on uint64 and allocation-free.
func SplitMix64(z uint64) uint64 {
	z += Golden
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
