package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestHostLineReasons: an interval is host-limited by any kernel drop, and
// by late writes beyond the whole-run check's rule (more than 1 %, at
// least 3).
func TestHostLineReasons(t *testing.T) {
	cases := []struct {
		h    HostLine
		want []string
	}{
		{HostLine{}, nil},
		{HostLine{Writes: 100, RxQueueDrops: -1}, nil},
		{HostLine{Writes: 100, Late: 2, RxQueueDrops: 0}, nil},   // under MinLate
		{HostLine{Writes: 1000, Late: 10, RxQueueDrops: 0}, nil}, // 1 %: not more
		{HostLine{Writes: 1000, Late: 11}, []string{CodeLate}},
		{HostLine{Writes: 3, Late: 3}, []string{CodeLate}},
		{HostLine{Writes: 10, RxQueueDrops: 1}, []string{CodeRxQueueDrops}},
		{HostLine{Writes: 10, Late: 10, RxQueueDrops: 4}, []string{CodeRxQueueDrops, CodeLate}},
	}
	for _, c := range cases {
		if got := c.h.Reasons(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %q, want %q", c.h, got, c.want)
		}
	}
}

// TestStatsHostLines: the statistics lines' host blocks count every write
// once, per direction, and with writes made late on purpose
// (Config.InjectWriteLate) every one of them late; their wall-clock spans
// follow each other.
func TestStatsHostLines(t *testing.T) {
	for _, inject := range []time.Duration{0, 50 * time.Millisecond} {
		var stats bytes.Buffer
		r := relayLate(t, inject, Config{Stats: &stats, Interval: 20 * time.Millisecond}, starvedWrites)
		const n = starvedWrites
		r.Close()
		var writes, late [2]int64
		var lastEnd int64
		sc := bufio.NewScanner(&stats)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var l StatsLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if len(l.Host) != 2 || l.Host[0].Dir != "fwd" || l.Host[1].Dir != "rev" {
				t.Fatalf("inject %v: host blocks %+v: want fwd and rev", inject, l.Host)
			}
			for d, h := range l.Host {
				writes[d] += h.Writes
				late[d] += h.Late
				if h.RxQueueDrops != -1 {
					t.Errorf("inject %v: rx_queue_drops %d on in-memory sockets, want -1 (unknown)", inject, h.RxQueueDrops)
				}
			}
			if s := l.Host[0].Start().UnixNano(); lastEnd != 0 && s != lastEnd {
				t.Errorf("inject %v: an interval starts at %d, the previous ended at %d", inject, s, lastEnd)
			}
			lastEnd = l.Host[0].Wall
		}
		if writes[Fwd] != n || writes[Rev] != 0 {
			t.Errorf("inject %v: got %v writes (fwd, rev), want [%d 0]", inject, writes, n)
		}
		if inject > 0 && late[Fwd] != n {
			t.Errorf("inject %v: got %d late writes, want all %d", inject, late[Fwd], n)
		}
	}
}
