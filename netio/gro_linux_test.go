package netio

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"cclab/ecn"
	"cclab/internal/testenv"
)

// sentDG is a datagram a GRO test sends: its size and ECN codepoint.
type sentDG struct {
	n  int
	cp ecn.Codepoint
}

// groMix is a sequence that exercises every rule of coalescing: a run
// longer than one GSO send (64 segments), a run ending in a short datagram,
// a longer datagram after a run (starts a new one), changes of ECN
// codepoint (end a run: the kernel coalesces only datagrams with equal
// TOS), and single datagrams.
func groMix() []sentDG {
	var s []sentDG
	for range 70 {
		s = append(s, sentDG{1200, ecn.ECT0})
	}
	s = append(s, sentDG{1200, ecn.ECT0}, sentDG{500, ecn.ECT0}, // short last segment
		sentDG{1200, ecn.NotECT}, sentDG{1200, ecn.NotECT},
		sentDG{800, ecn.CE}, sentDG{800, ecn.CE}, sentDG{900, ecn.CE}, // longer: a new run
		sentDG{100, ecn.ECT1},
		sentDG{1472, ecn.ECT0}, sentDG{1472, ecn.ECT0}, sentDG{1472, ecn.ECT0}, sentDG{1, ecn.ECT0})
	for range 5 {
		s = append(s, sentDG{1000, ecn.CE})
	}
	return s
}

// sendMix sends want from tx to to, datagram i tagged with i in its first
// two bytes, through GSO (WriteMessages) or plain WriteBatch.
func sendMix(t *testing.T, tx *UDPConn, to netip.AddrPort, want []sentDG, gso bool) {
	t.Helper()
	ms := make([]Message, len(want))
	for i, w := range want {
		b := make([]byte, w.n)
		for j := range b {
			b[j] = byte(i + j)
		}
		if w.n >= 2 {
			binary.BigEndian.PutUint16(b, uint16(i))
		}
		ms[i] = Message{Buf: b, N: w.n, Addr: to, ECN: w.cp}
	}
	if !gso {
		if n, err := tx.WriteBatch(ms); err != nil || n != len(ms) {
			t.Fatalf("WriteBatch: got %d, %v; want %d, nil", n, err, len(ms))
		}
		return
	}
	g := NewGSOWriter(tx)
	if g == nil {
		testenv.Need(t, "UDP GSO (UDP_SEGMENT, Linux >= 4.18)", errors.New("NewGSOWriter returned nil"))
	}
	sent, calls, err := g.WriteMessages(ms)
	if err != nil || sent != len(ms) {
		t.Fatalf("WriteMessages: got %d, %v; want %d, nil", sent, err, len(ms))
	}
	if calls < 1 {
		t.Errorf("WriteMessages made %d system calls, want >= 1", calls)
	}
}

// receiveMix reads until every datagram of want arrived and checks each one
// (size, tag, contents, ECN) in order; it returns the number of reads that
// held several datagrams.
func receiveMix(t *testing.T, rx *UDPConn, want []sentDG) (coalesced int) {
	t.Helper()
	rm := make([]Message, 8)
	for i := range rm {
		rm[i].Buf = make([]byte, GROBufSize)
	}
	_ = rx.Raw().SetReadDeadline(time.Now().Add(10 * time.Second))
	got := 0
	for got < len(want) {
		n, err := rx.ReadBatch(rm)
		if err != nil {
			t.Fatalf("read after %d of %d datagrams: %v", got, len(want), err)
		}
		for _, m := range rm[:n] {
			if m.Count() > 1 {
				coalesced++
			}
			for k := range m.Count() {
				d := m.Datagram(k)
				if got >= len(want) {
					t.Fatalf("more datagrams than sent: %d", got+1)
				}
				w := want[got]
				tag := got
				if len(d) >= 2 {
					tag = int(binary.BigEndian.Uint16(d))
				}
				if len(d) != w.n || tag != got || m.ECN != w.cp {
					t.Fatalf("datagram %d: got len %d tag %d ECN %v, want %d %d %v (message N %d Seg %d)",
						got, len(d), tag, m.ECN, w.n, got, w.cp, m.N, m.Seg)
				}
				for j := 2; j < len(d); j++ {
					if d[j] != byte(got+j) {
						t.Fatalf("datagram %d byte %d: got %d, want %d", got, j, d[j], byte(got+j))
					}
				}
				got++
			}
		}
	}
	return coalesced
}

// TestGROReceivesGSORuns: GSO runs sent to a socket with GRO on the same
// host arrive coalesced, and splitting them gives back exactly the
// datagrams sent, in order, each with its ECN codepoint; over IPv4 and
// IPv6, from connected and unconnected senders.
func TestGROReceivesGSORuns(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		connected  bool
	}{
		{"ipv4", "127.0.0.1:0", false},
		{"ipv4 connected", "127.0.0.1:0", true},
		{"ipv6", "[::1]:0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rx, err := ListenUDP(tc.addr)
			if err != nil {
				if tc.addr == "[::1]:0" {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				t.Fatal(err)
			}
			defer rx.Close()
			if !EnableGRO(rx) {
				testenv.Need(t, "UDP GRO (UDP_GRO, Linux >= 5.0)", errors.New("EnableGRO returned false"))
			}
			var tx *UDPConn
			if tc.connected {
				tx, err = DialUDP("", rx.LocalAddr().String())
			} else {
				tx, err = ListenUDP(tc.addr)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			want := groMix()
			sendMix(t, tx, rx.LocalAddr(), want, true)
			if c := receiveMix(t, rx, want); c == 0 {
				t.Errorf("no read held several datagrams: GSO runs were not delivered coalesced")
			}
		})
	}
}

// TestGROPlainSender: datagrams sent one by one reach a socket with GRO
// intact and in order.
func TestGROPlainSender(t *testing.T) {
	rx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if !EnableGRO(rx) {
		testenv.Need(t, "UDP GRO (UDP_GRO, Linux >= 5.0)", errors.New("EnableGRO returned false"))
	}
	tx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	want := groMix()
	sendMix(t, tx, rx.LocalAddr(), want, false)
	receiveMix(t, rx, want)
}

// TestGROFallback: without GRO (switched off by CCLAB_NO_GRO, or a socket
// that is not UDP) EnableGRO says so, and GSO runs reach the receiver as
// separate datagrams (Seg 0), intact.
func TestGROFallback(t *testing.T) {
	t.Setenv("CCLAB_NO_GRO", "1")
	rx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if EnableGRO(rx) {
		t.Fatal("EnableGRO with CCLAB_NO_GRO=1: got true, want false")
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if EnableGRO(a) {
		t.Error("EnableGRO(MemConn): got true, want false")
	}
	tx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	want := groMix()
	sendMix(t, tx, rx.LocalAddr(), want, true)
	if c := receiveMix(t, rx, want); c != 0 {
		t.Errorf("reads holding several datagrams without GRO: got %d, want 0", c)
	}
}

// TestWriteMessagesAllocs: the GSO write path does not allocate once warm.
func TestWriteMessagesAllocs(t *testing.T) {
	rx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	g := NewGSOWriter(tx)
	if g == nil {
		testenv.Need(t, "UDP GSO (UDP_SEGMENT, Linux >= 4.18)", errors.New("NewGSOWriter returned nil"))
	}
	ms := make([]Message, 16)
	for i := range ms {
		ms[i] = Message{Buf: make([]byte, 1000), N: 1000, Addr: rx.LocalAddr()}
	}
	if _, _, err := g.WriteMessages(ms); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { _, _, _ = g.WriteMessages(ms) }); a != 0 {
		t.Errorf("allocations per WriteMessages: got %v, want 0", a)
	}
}

// FuzzParseCmsgs: any control-message bytes parse without panicking, to a
// non-negative segment size.
func FuzzParseCmsgs(f *testing.F) {
	oob := groOOB(1200, ecn.CE)
	f.Add(oob)
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Add(append(stampOOB(1_700_000_000, 123_456_789), oob...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, seg, _ := parseCmsgs(b); seg < 0 {
			t.Fatalf("parseCmsgs: negative segment size %d", seg)
		}
	})
}

// TestParseCmsgs: the segment size, the ECN codepoint and the kernel
// receive time of a read, each present or not.
func TestParseCmsgs(t *testing.T) {
	gro := groOOB(1200, ecn.CE)[:2*unix.CmsgSpace(4)]
	stamp := stampOOB(1_700_000_000, 123_456_789)
	const ns = 1_700_000_000*1e9 + 123_456_789
	for _, tc := range []struct {
		name string
		oob  []byte
		cp   ecn.Codepoint
		seg  int
		rx   int64
	}{
		{"GRO and TOS", gro, ecn.CE, 1200, 0},
		{"TOS only", gro[unix.CmsgSpace(4):], ecn.CE, 0, 0},
		{"stamp, GRO and TOS", append(append([]byte{}, stamp...), gro...), ecn.CE, 1200, ns},
		{"GRO, TOS and stamp", append(append([]byte{}, gro...), stamp...), ecn.CE, 1200, ns},
		{"stamp only", stamp, ecn.NotECT, 0, ns},
		{"stamp cut short", stamp[:unix.CmsgLen(0)+8], ecn.NotECT, 0, 0},
	} {
		cp, seg, rx := parseCmsgs(tc.oob)
		if cp != tc.cp || seg != tc.seg || rx != tc.rx {
			t.Errorf("%s: got %v, %d, %d; want %v, %d, %d", tc.name, cp, seg, rx, tc.cp, tc.seg, tc.rx)
		}
	}
}

// stampOOB is the control data of a read with a kernel receive timestamp:
// one SCM_TIMESTAMPNS message of sec seconds and nsec nanoseconds.
func stampOOB(sec, nsec int64) []byte {
	oob := make([]byte, unix.CmsgSpace(sizeofTimespec))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(sizeofTimespec))
	ts := unix.NsecToTimespec(sec*1e9 + nsec)
	copy(oob[unix.CmsgLen(0):], unsafe.Slice((*byte)(unsafe.Pointer(&ts)), sizeofTimespec))
	return oob
}

// groOOB is the control data of a GRO read: a UDP_GRO message with segment
// size seg, then an IP_TOS message with cp.
func groOOB(seg int, cp ecn.Codepoint) []byte {
	oob := make([]byte, oobSize)
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.IPPROTO_UDP, unix.UDP_GRO
	h.SetLen(unix.CmsgLen(4))
	binary.NativeEndian.PutUint32(oob[unix.CmsgLen(0):], uint32(seg))
	putTOS(oob[unix.CmsgSpace(4):], netip.MustParseAddrPort("127.0.0.1:1"), false, cp)
	return oob
}
