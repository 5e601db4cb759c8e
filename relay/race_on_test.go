//go:build race

package relay

// raceEnabled: the race detector slows the relay's real-time scheduler
// about tenfold, so delivered rates are not compared with the model.
const raceEnabled = true
