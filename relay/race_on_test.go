//go:build race

package relay

// raceEnabled: the race detector slows the relay's real-time scheduler
// about tenfold, so delivered rates and median delays are not compared
// with the model's (bounds and counts still are).
const raceEnabled = true
