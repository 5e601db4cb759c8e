package perfcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/internal/cli"
	"cclab/internal/testenv"
	"cclab/perf"
)

// startReceiver runs the receiver with args (after -listen 127.0.0.1:0 -q
// -i 0: no interval lines unless args ask) and returns its address and a
// channel with its exit code.
func startReceiver(t *testing.T, args ...string) (string, *testenv.Buffer, <-chan int) {
	t.Helper()
	out := &testenv.Buffer{}
	ready := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- Receiver(append([]string{"-listen", "127.0.0.1:0", "-q", "-i", "0"}, args...), out, &testenv.Buffer{}, ready)
	}()
	select {
	case addr := <-ready:
		return addr, out, code
	case c := <-code:
		t.Fatalf("receiver exited with %d", c)
	}
	return "", nil, nil
}

func TestOnceJSONForward(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-J")
	res, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 2 << 20})
	if err != nil {
		t.Fatalf("sender: %v", err)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("receiver exit %d, want 0", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("receiver -1 did not exit after one flow")
	}
	// iperf3 -s -J's schema, with the flow summaries under start.cclab.
	var doc struct {
		Start struct {
			Cclab []perf.FlowSummary `json:"cclab"`
		} `json:"start"`
		End struct {
			SumReceived struct {
				Bytes int64 `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.NewDecoder(strings.NewReader(out.String())).Decode(&doc); err != nil || len(doc.Start.Cclab) != 1 {
		t.Fatalf("receiver JSON: %v: %q", err, out.String())
	}
	s := doc.Start.Cclab[0]
	if doc.End.SumReceived.Bytes != 2<<20 || s.Digest != res.End.ReceiverDigest || s.ConnID != res.Start.ConnID {
		t.Errorf("summary: got end.sum_received.bytes %d digest %.8s id %s, want %d %.8s %s",
			doc.End.SumReceived.Bytes, s.Digest, s.ConnID, 2<<20, res.End.ReceiverDigest, res.Start.ConnID)
	}
	if got, want := s.Endpoint, (&perf.EndpointCounts{}); got == nil || *got != *want {
		t.Errorf("start.cclab[0].endpoint = %+v, want %+v (no pressure)", got, want)
	}
}

// TestSummaryEndpointCounts: a flow's summary line is followed by the
// receiver's admission counters once any is not zero, after an error too.
func TestSummaryEndpointCounts(t *testing.T) {
	c := &perf.EndpointCounts{CookiesSent: 3, StatelessAccepts: 2, Evicted: 1, RefusedFull: 4}
	want := "[ab] receiver admission (totals): cookies_sent=3 stateless_accepts=2 evicted=1 refused_full=4\n"
	for _, s := range []perf.FlowSummary{
		{ConnID: "ab", Peer: "127.0.0.1:1", Bytes: 10, Seconds: 1, Verify: perf.VerifyPattern, Endpoint: c},
		{ConnID: "ab", Peer: "127.0.0.1:1", Error: "evicted", Endpoint: c},
	} {
		var b strings.Builder
		writeSummary(&b, s)
		if got := b.String(); !strings.HasSuffix(got, want) {
			t.Errorf("summary %q, want it to end with %q", got, want)
		}
		b.Reset()
		s.Endpoint = &perf.EndpointCounts{}
		writeSummary(&b, s)
		if got := b.String(); strings.Contains(got, "admission") {
			t.Errorf("summary with zero counters %q, want no admission line", got)
		}
	}
}

func TestOnceReverse(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-allow-reverse")
	res, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 2 << 20, Reverse: true, CC: "reno", Recovery: "reno"})
	if err != nil {
		t.Fatalf("sender -R: %v", err)
	}
	if !res.End.Verified || res.End.Recovery != "reno" {
		t.Errorf("reverse end: verified %v recovery %q, want true reno", res.End.Verified, res.End.Recovery)
	}
	select {
	case <-code:
	case <-time.After(30 * time.Second):
		t.Fatal("receiver -1 did not exit after a reverse flow")
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	lines := 0
	for sc.Scan() {
		lines++
		if !strings.Contains(sc.Text(), " sent ") || !strings.Contains(sc.Text(), "recovery=reno") {
			t.Errorf("summary line %q: want a reverse (sent) line naming recovery=reno", sc.Text())
		}
	}
	if lines != 1 {
		t.Errorf("summary lines: got %d, want 1", lines)
	}
}

func TestManyConcurrentFlows(t *testing.T) {
	addr, out, _ := startReceiver(t)
	const flows = 4
	var wg sync.WaitGroup
	errs := make(chan error, flows)
	for i := 0; i < flows; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 2 << 20})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("flow: %v", err)
		}
	}
	// Summary lines are printed as flows finish; wait briefly for the last.
	for i := 0; i < 100 && strings.Count(out.String(), "\n") < flows; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(out.String(), "received"); n != flows {
		t.Errorf("summary lines: got %d, want %d:\n%s", n, flows, out.String())
	}
}

func TestReceiverBadFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if c := Receiver([]string{"-nosuch"}, &out, &errb, nil); c != 2 {
		t.Errorf("exit %d, want 2", c)
	}
}

// TestBadReceiveFlags: the receiving side's settings are range-checked as
// parsed, exit 2 with a message naming the flag and the allowed range.
func TestBadReceiveFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ack-every", "0"}, "-ack-every: must be 1..64"},
		{[]string{"-ack-every", "65"}, "-ack-every: must be 1..64"},
		{[]string{"-delayed-ack", "-1ms"}, "-delayed-ack: must be at least 0"},
		{[]string{"-delayed-ack", "1s"}, "below 500ms"},
		{[]string{"-window", "17999"}, "-window: must be 18000..1073741824 bytes"},
		{[]string{"-window", "2GiB"}, "-window: must be 18000..1073741824 bytes"},
	} {
		var out, errb bytes.Buffer
		if c := Receiver(tc.args, &out, &errb, nil); c != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("receiver %q: exit %d, stderr %q; want 2 and %q", tc.args, c, errb.String(), tc.want)
		}
	}
}

func TestBadReverseFlags(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644)
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-max-reverse-bytes", "0"}, "-max-reverse-bytes"},
		{[]string{"-max-reverse-bytes", "lots"}, "-max-reverse-bytes"},
		{[]string{"-max-reverse-seconds", "2h"}, "-max-reverse-seconds"},
		{[]string{"-max-reverse-seconds", "-1s"}, "-max-reverse-seconds"},
		{[]string{"-max-reverse-flows", "0"}, "-max-reverse-flows"},
		{[]string{"-reverse-cc", "reno,nosuch"}, "-reverse-cc"},
		{[]string{"-psk-file", filepath.Join(dir, "missing")}, "-psk-file"},
		{[]string{"-psk-file", open}, "chmod 600"},
	} {
		var out, errb bytes.Buffer
		if c := Receiver(append([]string{"-listen", "127.0.0.1:0"}, tc.args...), &out, &errb, nil); c != 2 {
			t.Errorf("Receiver(%q): exit %d, want 2 (stderr %q)", tc.args, c, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("Receiver(%q): stderr %q, want one line naming %s", tc.args, errb.String(), tc.want)
		}
	}
}

// TestReverseWithKeyFile: a receiver with -psk-file serves a reverse flow
// to a client with the same key and refuses one without.
func TestReverseWithKeyFile(t *testing.T) {
	key := filepath.Join(t.TempDir(), "psk")
	if err := os.WriteFile(key, []byte("lab "+strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, _ := startReceiver(t, "-allow-reverse", "-psk-file", key)
	keys, err := perf.LoadKeyFile(key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 1 << 20, Reverse: true, Keys: keys})
	if err != nil || !res.End.Verified {
		t.Fatalf("sender -R -psk-file: got %v, want a verified transfer", err)
	}
	_, err = perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 1 << 20, Reverse: true})
	if err == nil || !strings.Contains(err.Error(), "-psk-file") {
		t.Errorf("sender -R without a key: got %v, want a refusal naming -psk-file", err)
	}
}

// TestReceiverFlagsDocumented: every flag of -h is in docs/receiver.md.
func TestReceiverFlagsDocumented(t *testing.T) {
	var out, errb bytes.Buffer
	Receiver([]string{"-h"}, &out, &errb, nil)
	doc, err := os.ReadFile("../../docs/receiver.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "  -psk-file") {
		t.Fatalf("-h output lists no flags: %q", errb.String())
	}
	if m := cli.Undocumented(errb.String(), string(doc)); len(m) > 0 {
		t.Errorf("flags missing from docs/receiver.md: %v", m)
	}
}
