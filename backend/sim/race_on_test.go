//go:build race

package simrun

// raceEnabled: the race detector slows the simulator about tenfold, and the
// simulator is single-threaded, so long acceptance tables run one case.
const raceEnabled = true
