//go:build !unix

package rusage

import "time"

func cpu() (time.Duration, bool) { return 0, false }

func times() (user, system time.Duration, ok bool) { return 0, 0, false }

func maxRSS() (int64, bool) { return 0, false }
