//go:build !unix

package sim

import "time"

// cpuTime is unknown here: the CPU-time rates are not reported.
func cpuTime() time.Duration { return 0 }
