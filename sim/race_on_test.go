//go:build race

package sim

// raceEnabled: the race detector slows the engine about tenfold, so the
// randomized engine comparisons run shorter (the engine is single-threaded:
// the detector has nothing to find in them).
const raceEnabled = true
