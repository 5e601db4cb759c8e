package link

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Trace is a Mahimahi-format schedule of delivery opportunities: each entry
// is an offset from the start of the trace at which one MTU-sized packet
// (Config.MTU bytes, default 1500) may leave the link. Several entries with
// the same offset are several opportunities at that instant. The trace loops
// with a period equal to its last offset, as in Mahimahi's mm-link.
type Trace struct {
	Offsets []time.Duration // non-decreasing, from the trace start
	Period  time.Duration   // loop period: the last offset
}

// TraceFromReader parses a Mahimahi trace: one non-negative integer per line,
// a millisecond timestamp, non-decreasing. Blank lines and lines starting
// with '#' are ignored. The last timestamp must be positive (it is the loop
// period).
func TraceFromReader(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	t := &Trace{}
	line := 0
	var last int64 = -1
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("link: trace line %d: %q is not a non-negative integer millisecond timestamp", line, s)
		}
		if ms < last {
			return nil, fmt.Errorf("link: trace line %d: timestamp %d ms is before the previous one (%d ms); timestamps must not decrease", line, ms, last)
		}
		if ms > int64(365*24*time.Hour/time.Millisecond) {
			return nil, fmt.Errorf("link: trace line %d: timestamp %d ms is too large", line, ms)
		}
		last = ms
		t.Offsets = append(t.Offsets, time.Duration(ms)*time.Millisecond)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("link: trace: %v", err)
	}
	if len(t.Offsets) == 0 {
		return nil, fmt.Errorf("link: trace has no timestamps")
	}
	t.Period = t.Offsets[len(t.Offsets)-1]
	if t.Period <= 0 {
		return nil, fmt.Errorf("link: trace's last timestamp must be positive (it is the loop period)")
	}
	return t, nil
}

// Rate returns the trace's mean capacity in bits/s for opportunities of mtu bytes.
func (t *Trace) Rate(mtu int) float64 {
	return float64(len(t.Offsets)) * float64(mtu) * 8 / t.Period.Seconds()
}
