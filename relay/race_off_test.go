//go:build !race

package relay

// raceEnabled reports whether the race detector is on (see race_on_test.go).
const raceEnabled = false
