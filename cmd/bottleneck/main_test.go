package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/link"
)

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // substring of stderr
	}{
		{[]string{"-target", "127.0.0.1:9", "-rate", "fast"}, "16Mbit"},
		{[]string{"-target", "127.0.0.1:9", "-delay", "5"}, "7.5ms"},
		{[]string{"-target", "127.0.0.1:9", "-queue", "nosuch"}, "allowed: "},
		{[]string{"-target", "127.0.0.1:9", "-loss", "2"}, "0..1"},
		{[]string{"-target", "127.0.0.1:9", "-loss", "gauss:p=1"}, "ge:p="},
		{[]string{"-target", "127.0.0.1:9", "-rev-rate", "-1Mbit"}, "negative"},
		{[]string{"-target", "127.0.0.1:9", "-hop", "speed=1"}, "keys:"},
		{[]string{"-target", "127.0.0.1:9", "-hop", "rate=1Mbit", "-rate", "2Mbit"}, "cannot be combined"},
		{[]string{"-target", "127.0.0.1:9", "-cross", "cbr:rate=0"}, "rate must be"},
		{[]string{"-target", "127.0.0.1:9", "-cross", "greedy"}, "not a datagram generator"},
		{[]string{"-target", "127.0.0.1:9", "-overhead", "-1"}, "auto or 0..65535"},
		{[]string{"-target", "127.0.0.1:9", "-overhead", "big"}, "auto or 0..65535"},
		{[]string{"-target", "127.0.0.1:9", "-cross", "cbr:rate=1M,hop=3"}, "hop=3"},
		{[]string{"-target", "127.0.0.1:9", "-trace", "/nonexistent"}, "trace"},
		{[]string{"-rate", "1Mbit"}, "-target is required"},
		{[]string{"-target", "127.0.0.1:9", "-classify", "port"}, "5tuple and cid"},
		{[]string{"-target", "127.0.0.1:9", "extra"}, "unexpected argument"},
		{[]string{"-target", "127.0.0.1:9", "-entry", "127.0.0.1:0"}, "ADDR=FIRST-LAST"},
		{[]string{"-target", "127.0.0.1:9", "-entry", "127.0.0.1:0=2-1"}, "FIRST <= LAST"},
		{[]string{"-target", "127.0.0.1:9", "-hop", "delay=1ms", "-entry", "127.0.0.1:0=1"}, "entry 0"},
		{[]string{"-tun", "-target", "127.0.0.1:9"}, "-target does not apply with -tun"},
		{[]string{"-tun", "-buf", "2000"}, "-buf does not apply with -tun"},
		{[]string{"-tun", "-entry", "127.0.0.1:0=0-0"}, "-entry does not apply with -tun"},
		{[]string{"-target", "127.0.0.1:9", "-tun-mtu", "9000"}, "-tun-mtu needs -tun"},
		{[]string{"-tun", "-tun-mtu", "100"}, "1280..65535"},
		{[]string{"-tun", "-tun-net", "nonsense"}, "not an IP prefix"},
		{[]string{"-tun", "-tun-net", "fd00::/64"}, "IPv4 prefix"},
		{[]string{"-target", "127.0.0.1:9", "-spin", "fast"}, "want auto, off or a duration"},
		{[]string{"-target", "127.0.0.1:9", "-spin", "-1us"}, "want auto, off or a duration"},
		{[]string{"-target", "127.0.0.1:9", "-poll", "spin"}, "allowed values are sleep, busy and wait"},
		{[]string{"-target", "127.0.0.1:9", "-poll", "busy", "-realtime"}, "cannot be combined with -realtime"},
		{[]string{"-tun", "-poll", "busy"}, "-poll busy does not apply with -tun"},
		{[]string{"-tun", "-poll", "wait"}, "-poll wait does not apply with -tun"},
		{[]string{"-target", "127.0.0.1:9", "-mtu", "10"}, "-mtu: link: MTU 10: must be 68..65536 bytes"},
		{[]string{"-target", "127.0.0.1:9", "-rev-mtu", "67"}, "-rev-mtu: link: MTU 67"},
		{[]string{"-target", "127.0.0.1:9", "-jitter", "10ms", "-delay", "1ms"}, "-jitter: link: Jitter 10ms: must be 0..delay (1ms)"},
		{[]string{"-target", "127.0.0.1:9", "-hop", "delay=1ms,jitter=2ms"}, "Jitter 2ms: must be 0..delay"},
		{[]string{"-target", "127.0.0.1:9", "-buf", "0"}, "-buf 0: must be between 1 and 65535 bytes"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb, nil)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("run(%q): exit %d, stderr %q; want non-zero exit and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestSpinFlag: -spin's values and the relay.Config.Spin each gives (0:
// learned, negative: never poll).
func TestSpinFlag(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		str  string
	}{
		{"auto", 0, "auto"},
		{"off", -1, "off"},
		{"0", -1, "off"},
		{"150us", 150 * time.Microsecond, "150µs"},
	}
	for _, tc := range tests {
		d := time.Duration(42)
		f := spinFlag{&d}
		if err := f.Set(tc.in); err != nil {
			t.Errorf("Set(%q): %v", tc.in, err)
			continue
		}
		if d != tc.want || f.String() != tc.str {
			t.Errorf("Set(%q): got %v (%s), want %v (%s)", tc.in, d, f.String(), tc.want, tc.str)
		}
	}
}

// lineWriter keeps what is written to it and tells waiters of each
// complete line.
type lineWriter struct {
	mu      sync.Mutex
	all     bytes.Buffer
	lines   []string
	partial []byte
	changed chan struct{} // a token after each new line
}

func newLineWriter() *lineWriter { return &lineWriter{changed: make(chan struct{}, 1)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, string(w.partial[:i]))
		w.partial = w.partial[i+1:]
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// waitLine returns the first complete line from index from on that ok
// accepts, and its index; it fails the test after 10 s without one.
func (w *lineWriter) waitLine(t *testing.T, from int, ok func(string) bool) (string, int) {
	t.Helper()
	give := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		lines := w.lines
		w.mu.Unlock()
		for i := from; i < len(lines); i++ {
			if ok(lines[i]) {
				return lines[i], i
			}
		}
		from = len(lines)
		select {
		case <-w.changed:
		case <-give:
			t.Fatalf("no such line after 10 s; output so far: %q", w.String())
		}
	}
}

// TestRunStatsAndSummary: a relay on a port of its own choosing (it says
// which on stderr) relays five datagrams, writes interval statistics to
// stdout (-stats -) and a final line and its summary when stopped.
func TestRunStatsAndSummary(t *testing.T) {
	dst, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	stop := make(chan struct{})
	done := make(chan int)
	out, errw := newLineWriter(), newLineWriter()
	go func() {
		done <- run([]string{"-listen", "127.0.0.1:0", "-target", dst.LocalAddr().String(), "-rate", "10Mbit", "-delay", "5ms",
			"-queue", "droptail:10p", "-stats", "-", "-interval", "50ms"}, out, errw, stop)
	}()
	line, _ := errw.waitLine(t, 0, func(l string) bool { return strings.HasPrefix(l, "bottleneck: relaying ") })
	listen := strings.Fields(strings.TrimPrefix(line, "bottleneck: relaying "))[0]
	c, err := net.Dial("udp", listen)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		c.Write([]byte("hello"))
	}
	dst.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 100)
	for i := 0; i < 5; i++ {
		if _, err := dst.Read(buf); err != nil {
			t.Fatalf("datagram %d not relayed: %v", i, err)
		}
	}
	// One interval line after the last departure, then the final one.
	out.mu.Lock()
	n := len(out.lines)
	out.mu.Unlock()
	out.waitLine(t, n, func(string) bool { return true })
	close(stop)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errw.String())
	}
	errb := errw
	if !strings.Contains(errb.String(), "bottleneck summary") {
		t.Errorf("no summary on stderr: %q", errb.String())
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines, final, departures, depBytes := 0, false, int64(0), int64(0)
	for sc.Scan() {
		var l struct {
			Final bool `json:"final"`
			Hops  []struct {
				Dir        string `json:"dir"`
				Departures int64  `json:"departures"`
				Bytes      int64  `json:"departure_bytes"`
			} `json:"hops"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d is not JSON: %v", lines, err)
		}
		lines++
		final = final || l.Final
		for _, h := range l.Hops {
			if h.Dir == "fwd" {
				departures += h.Departures
				depBytes += h.Bytes
			}
		}
	}
	if lines < 2 || !final || departures != 5 {
		t.Errorf("stats: %d lines, final %v, forward departures %d; want >= 2 lines, a final line, 5 departures", lines, final, departures)
	}
	// The target is IPv4: by default each 5-byte datagram counts its IPv4+UDP headers.
	if want := int64(5 * (len("hello") + link.IPv4UDPOverhead)); depBytes != want {
		t.Errorf("stats: forward departure bytes %d, want %d (5 datagrams × (5 + %d))", depBytes, want, link.IPv4UDPOverhead)
	}
}
