package udp

import (
	"net"
	"runtime"
	"testing"
	"time"

	"cclab/internal/hostlimit"
)

// TestReadLateStalledReader: a driver whose reader is held off the socket
// (Config.pauseRead) while a datagram waits counts that datagram's read
// as late by at least the stall, against the kernel's receive stamp, and a
// short flow with that lateness is judged host-limited (read_late); in
// both driver shapes.
func TestReadLateStalledReader(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps (SO_TIMESTAMPNS) are read on Linux only")
	}
	const stall = 3 * hostlimit.LateLimit
	for _, one := range []bool{false, true} {
		name := map[bool]string{false: "two goroutines", true: "one goroutine"}[one]
		t.Run(name, func(t *testing.T) {
			if one {
				needOneGoroutine(t)
			}
			calls := 0 // the reader's goroutine only
			stalled, second := make(chan struct{}), make(chan struct{})
			pause := func() {
				calls++
				switch calls {
				case 1:
					close(stalled)
					time.Sleep(stall) // the stall under test (not a synchronisation)
				case 2:
					close(second)
				}
			}
			e, err := Listen("127.0.0.1:0", Config{OneGoroutine: one, pauseRead: pause})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(e.LocalAddr()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			junk := make([]byte, 100)
			if _, err := c.Write(junk); err != nil {
				t.Fatal(err)
			}
			<-stalled
			// The second datagram makes a second read batch: its
			// pause call says the first batch's input has finished.
			if _, err := c.Write(junk); err != nil {
				t.Fatal(err)
			}
			<-second
			st := e.LoopStats()
			if got := st.ReadLate; got.Count < 1 || got.Late < 1 || got.Max < stall {
				t.Fatalf("ReadLate %+v: want at least one read, late, by at least %v", got, stall)
			}
			r := hostlimit.Report{ReadLate: st.ReadLate, MinRTT: hostlimit.LateLimit}
			r.Judge()
			if got, want := r.Codes(), hostlimit.CodeReadLate; got != want {
				t.Errorf("codes %q, want %q (%v)", got, want, r.Reasons)
			}
		})
	}
}
