package simrun

import "cclab/eval"

// The backend is a runner of the harness.
var _ eval.Runner = Runner{}
