//go:build !unix

package rusage

import "time"

func cpu() (time.Duration, bool) { return 0, false }

func maxRSS() (int64, bool) { return 0, false }
