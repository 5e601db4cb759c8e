package scenario

// RunSpec is one run to execute: a point of an experiment on one backend
// with one seed.
type RunSpec struct {
	Experiment string
	Point      Point
	Backend    string
	Seed       uint64
	Key        string // identifies the run in the store: hash of the point's configuration, backend and seed
}
