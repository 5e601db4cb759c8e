package transport

import (
	"testing"
	"time"
)

// TestSendIdleChangesNothing: Transmit's skip of a connection whose sending
// side is idle (Conn.sendIdle: nothing to send, nothing outstanding, the
// strategy already asked) leaves every event where it was. For every
// recovery strategy and several controllers, over lossy, reordering paths,
// a transfer whose receiver later writes data of its own (so its idle
// sending side wakes up) gives the same event trace with the skip as with
// sendIdle cleared before every Transmit (the connection asked in full
// each time), and the skip happens. Whenever a connection's sendIdle is
// set, it has nothing it could send (no data, no FIN pending, nothing
// outstanding): the skip never holds back a connection that could send.
func TestSendIdleChangesNothing(t *testing.T) {
	for _, rec := range Recoveries.Names() {
		for _, cc := range []string{"reno", "cubic", "bbr"} {
			for _, reply := range []int{0, 40_000} {
				t.Run(rec+"/"+cc+"/"+map[bool]string{true: "reply", false: "oneway"}[reply > 0], func(t *testing.T) {
					on, idle := sendIdleRun(t, rec, cc, reply, false)
					off, _ := sendIdleRun(t, rec, cc, reply, true)
					if on != off {
						t.Errorf("trace with the skip differs from the trace without it")
					}
					if idle == 0 {
						t.Errorf("no Transmit found a connection with sendIdle set: the skip was not exercised")
					}
				})
			}
		}
	}
}

// sendIdleRun transfers 200 kB from client to server over a lossy path;
// the server, once it has read 100 kB, writes reply bytes back. With
// clear, every connection's sendIdle is cleared before each Transmit. It
// returns the event trace's digest and how many Transmits found a
// connection with sendIdle set.
func sendIdleRun(t *testing.T, rec, cc string, reply int, clear bool) (trace [32]byte, idle int) {
	const size = 200_000
	h := newHarness(t, 11, impairedPath(0.03), impairedPath(0.03), Config{Recovery: rec, CC: cc})
	h.beforeTransmit = func(i int) {
		for _, c := range h.eps[i].Conns() {
			if c.sendIdle {
				idle++
				if c.sb.count > 0 || c.avail() > 0 || c.finPending {
					t.Fatalf("sendIdle set with %d segments outstanding, %d bytes to send, FIN pending %v: want none",
						c.sb.count, c.avail(), c.finPending)
				}
			}
			if clear {
				c.sendIdle = false
			}
		}
	}
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), size)
	var srv *Conn
	buf := make([]byte, 64<<10)
	out := make([]byte, reply)
	read, written := 0, 0
	h.app = func(h *harness) {
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv == nil {
			return
		}
		for n := srv.Read(buf); n > 0; n = srv.Read(buf) {
			read += n
		}
		if read >= size/2 && written < reply {
			written += srv.Write(out[written:])
		}
		if srv.EOF() && written == reply {
			srv.CloseWrite(h.now)
		}
		for cli.Read(buf) > 0 {
		}
	}
	if !h.run(time.Hour, func() bool { return cli.Done() && srv != nil && srv.Done() }) {
		t.Fatalf("transfer did not finish (client done=%v err=%v)", cli.Done(), cli.Err())
	}
	if cli.Err() != nil || srv.Err() != nil {
		t.Fatalf("errors: client %v, server %v", cli.Err(), srv.Err())
	}
	if got := srv.Stats().BytesDelivered; got != size {
		t.Fatalf("server delivered %d bytes, want %d", got, size)
	}
	if got := cli.Stats().BytesDelivered; got != uint64(reply) {
		t.Fatalf("client delivered %d bytes, want %d", got, reply)
	}
	return h.traceHash(), idle
}
