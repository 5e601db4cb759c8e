package perfcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"cclab/internal/cli"
	"cclab/perf"
)

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // substrings of stderr
	}{
		{[]string{"-n", "1G"}, []string{"-c"}},
		{[]string{"-c", "127.0.0.1", "-cc", "nosuch"}, []string{"nosuch", "registered controllers", "reno"}},
		{[]string{"-c", "127.0.0.1", "-cc", "reno:nokey=1"}, []string{"nokey"}},
		{[]string{"-c", "127.0.0.1", "-recovery", "fack2"}, []string{"fack2", "newreno"}},
		// parameter ranges, checked before dialing
		{[]string{"-c", "127.0.0.1", "-cc", "cubic:beta=2"}, []string{"beta=2", "between 0 and 1"}},
		{[]string{"-c", "127.0.0.1", "-cc", "reno:iw=7930000000000000"}, []string{"iw=7930000000000000", "0..16384 packets"}},
		{[]string{"-c", "127.0.0.1", "-recovery", "sack:dupthresh=0"}, []string{"dupthresh=0", "1..16384 packets"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-cc", "ccid2:ackratio=0"}, []string{"ackratio=0"}},
		{[]string{"-c", "127.0.0.1", "-n", "12XB"}, []string{"-n"}},
		{[]string{"-c", "127.0.0.1", "-t", "soon"}, []string{"-t"}},
		{[]string{"-c", "127.0.0.1", "-size", "100000"}, []string{"-size"}},
		{[]string{"-c", "127.0.0.1", "extra"}, []string{"unexpected"}},
		// -mode, and flags of -mode datagram
		{[]string{"-c", "127.0.0.1", "-mode", "bulk"}, []string{"-mode", "datagram"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-cc", "none"}, []string{"Rate"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-cc", "ccid9"}, []string{"ccid9", "ccid2", "none"}},
		{[]string{"-c", "127.0.0.1", "-P", "0"}, []string{"-P"}},
		{[]string{"-c", "127.0.0.1", "-P", "65"}, []string{"-P"}},
		{[]string{"-c", "127.0.0.1", "-p", "70000"}, []string{"-p"}},
		{[]string{"-c", "127.0.0.1", "-O", "-1"}, []string{"-O"}},
		{[]string{"-c", "127.0.0.1", "-i", "-1"}, []string{"-i"}},
		{[]string{"-c", "127.0.0.1", "-bogus"}, []string{"sender: flag provided but not defined: -bogus (sender -h lists the flags)\n"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-drop", "middle"}, []string{"-drop"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-rate", "fast"}, []string{"-rate"}},
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-on", "1s"}, []string{"On"}},
		// receiving-side settings: ranges named with the flag
		{[]string{"-c", "127.0.0.1", "-ack-every", "0"}, []string{"-ack-every", "1..64"}},
		{[]string{"-c", "127.0.0.1", "-delayed-ack", "500ms"}, []string{"-delayed-ack", "below 500ms"}},
		{[]string{"-c", "127.0.0.1", "-window", "1KiB"}, []string{"-window", "2400..1073741824"}},
		{[]string{"-c", "127.0.0.1", "-size", "1500", "-window", "2999"}, []string{"-window", "3000..1073741824"}},
		// a flag of the other mode is an error naming it as given
		{[]string{"-c", "127.0.0.1", "-mode", "datagram", "-P", "2"}, []string{"sender: -P: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "--parallel", "2"}, []string{"sender: -parallel: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "-R"}, []string{"sender: -R: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "-n", "1M"}, []string{"sender: -n: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "--bidir"}, []string{"sender: -bidir: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "-w", "1MiB"}, []string{"sender: -w: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "-recovery", "sack"}, []string{"sender: -recovery: stream mode only"}},
		{[]string{"-c", "127.0.0.1", "-queue", "8"}, []string{"sender: -queue: datagram mode only"}},
		{[]string{"-c", "127.0.0.1", "-on", "1s", "-off", "1s"}, []string{"sender: -off: datagram mode only"}},
		{[]string{"-c", "127.0.0.1", "-u", "-mode", "stream"}, []string{"-u with -mode stream"}},
		{[]string{"-c", "127.0.0.1", "-R", "-b", "10M"}, []string{"-b", "not with -R"}},
		{[]string{"-c", "127.0.0.1", "-u", "-p", "0"}, []string{"-p 0"}},
	} {
		var out, errb bytes.Buffer
		if code := Sender(tc.args, &out, &errb); code != 2 {
			t.Errorf("Sender(%q): exit %d, want 2 (stderr %q)", tc.args, code, errb.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("Sender(%q): stderr %q lacks %q", tc.args, errb.String(), w)
			}
		}
	}
}

func TestUnreachableExit1(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	var out, errb bytes.Buffer
	if code := Sender([]string{"-c", addr, "-n", "1M", "-connect-timeout", "2s"}, &out, &errb); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "refused") && !strings.Contains(errb.String(), "no answer") {
		t.Errorf("stderr %q: want a clear unreachable message", errb.String())
	}
	// With -J the failure is also a JSON object with an error.
	out.Reset()
	errb.Reset()
	if code := Sender([]string{"-c", addr, "-n", "1M", "-connect-timeout", "2s", "-J"}, &out, &errb); code != 1 {
		t.Errorf("-J: exit %d, want 1", code)
	}
	var obj struct{ Error string }
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil || obj.Error == "" {
		t.Errorf("-J output %q: want a JSON object with an error (%v)", out.String(), err)
	}
}

func TestJSONAgainstReceiver(t *testing.T) {
	srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go srv.Serve(t.Context())
	var out, errb bytes.Buffer
	if code := Sender([]string{"-c", srv.Addr().String(), "-n", "4MiB", "-J", "-i", "50ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	// iperf3's keys (perf's iperf3 tests read them as iperf3's consumers
	// do), and cclab's own account under end.cclab.
	var res struct {
		Start struct {
			TestStart struct {
				Protocol   string `json:"protocol"`
				NumStreams int    `json:"num_streams"`
			} `json:"test_start"`
		} `json:"start"`
		Intervals []struct {
			Streams []map[string]any `json:"streams"`
			Sum     map[string]any   `json:"sum"`
		} `json:"intervals"`
		End struct {
			SumSent     map[string]any `json:"sum_sent"`
			SumReceived map[string]any `json:"sum_received"`
			CPU         map[string]any `json:"cpu_utilization_percent"`
			Cclab       map[string]any `json:"cclab"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out.String())
	}
	if res.Start.TestStart.Protocol != "TCP" || res.Start.TestStart.NumStreams != 1 || len(res.Intervals) == 0 {
		t.Errorf("start.test_start %+v, %d intervals; want TCP, 1 stream, intervals", res.Start.TestStart, len(res.Intervals))
	}
	for _, k := range []string{"bytes", "bits_per_second", "seconds", "retransmits", "snd_cwnd", "rtt"} {
		if len(res.Intervals) > 0 && res.Intervals[0].Streams[0][k] == nil {
			t.Errorf("intervals[0].streams[0] lacks %q", k)
		}
	}
	if res.End.SumReceived["bytes"] != float64(4<<20) || res.End.SumSent["retransmits"] == nil || res.End.CPU["host_total"] == nil {
		t.Errorf("end.sum_received %v, end.sum_sent %v, cpu %v: want 4 MiB received, retransmits, host_total",
			res.End.SumReceived, res.End.SumSent, res.End.CPU)
	}
	for _, k := range []string{"cc", "recovery", "throughput_bps", "rtos", "rto_causes", "min_rtt_ms", "mean_srtt_ms", "verified"} {
		if _, ok := res.End.Cclab[k]; !ok {
			t.Errorf("end.cclab lacks %q", k)
		}
	}
	if causes, _ := res.End.Cclab["rto_causes"].(map[string]any); len(causes) != 6 || causes["burst_loss"] == nil || causes["other"] == nil || causes["spurious"] == nil {
		t.Errorf("end.cclab.rto_causes got %v, want burst_loss, too_few_dupacks, lost_retransmission, other, handshake, spurious", res.End.Cclab["rto_causes"])
	}
	if res.End.Cclab["verified"] != true {
		t.Errorf("end.cclab.verified %v, want true", res.End.Cclab["verified"])
	}
}

// TestReversePSKFile runs sender -R -psk-file against a receiver with the
// same key, and checks that a key file others may read is refused (exit 2).
func TestReversePSKFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "psk")
	if err := os.WriteFile(key, []byte(strings.Repeat("c3", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := perf.LoadKeyFile(key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0", AllowReverse: true, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	var out, errb bytes.Buffer
	if code := Sender([]string{"-c", srv.Addr().String(), "-R", "-n", "1MiB", "-psk-file", key}, &out, &errb); code != 0 {
		t.Errorf("sender -R -psk-file: exit %d, want 0 (stderr %q)", code, errb.String())
	}
	if err := os.Chmod(key, 0o640); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := Sender([]string{"-c", srv.Addr().String(), "-R", "-n", "1MiB", "-psk-file", key}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "chmod 600") {
		t.Errorf("sender with a group-readable key: exit %d stderr %q, want 2 and a chmod hint", code, errb.String())
	}
}

// TestSenderFlagsDocumented: every flag of -h is in docs/sender.md.
func TestSenderFlagsDocumented(t *testing.T) {
	var out, errb bytes.Buffer
	Sender([]string{"-h"}, &out, &errb)
	doc, err := os.ReadFile("../../docs/sender.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "  -psk-file") {
		t.Fatalf("-h output lists no flags: %q", errb.String())
	}
	if m := cli.Undocumented(errb.String(), string(doc)); len(m) > 0 {
		t.Errorf("flags missing from docs/sender.md: %v", m)
	}
}

// TestAliases: iperf3's names set cclab's flags (checked through the start
// line of a run that fails at once: nothing listens).
func TestAliases(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // substring of the start line
	}{
		{[]string{"--client", "127.0.0.1", "--port", "9", "--bytes", "20M"}, "sending 20.0 MB to 127.0.0.1:9"},
		{[]string{"-c", "127.0.0.1", "-p", "9", "-n", "20M", "--iperf3-units"}, "sending 21.0 MB to 127.0.0.1:9"},
		{[]string{"-c", "127.0.0.1", "-p", "9", "--parallel", "2", "-b", "5M", "--time", "1"}, "sending 1s to 127.0.0.1:9, cc=reno recovery=rack, 2 parallel flows, at most 5Mbit"},
	} {
		var out, errb bytes.Buffer
		Sender(append(tc.args, "--connect-timeout", "50ms"), &out, &errb)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("Sender(%q): output %q lacks %q (stderr %q)", tc.args, out.String(), tc.want, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := Sender([]string{"-v"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "sender: cclab ") {
		t.Errorf("-v: exit %d, output %q; want 0 and the version line", code, out.String())
	}
}

// TestParallelOneFlowFails runs -P 4 against a receiver that refuses one of
// the flows: the sender prints the other flows' lines, the failed one's
// error and the sums (text), or every stream and the error (-J), and exits 1.
func TestParallelOneFlowFails(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		var admitted atomic.Int32
		srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0", Admit: func(perf.Admission) (bool, error) {
			if admitted.Add(1) == 2 {
				return false, errors.New("refused by the test")
			}
			return true, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(t.Context())
		args := []string{"-c", srv.Addr().String(), "-n", "256KiB", "-P", "4", "-i", "0"}
		if jsonOut {
			args = append(args, "-J")
		}
		var out, errb bytes.Buffer
		code := Sender(args, &out, &errb)
		srv.Close()
		if code != 1 {
			t.Errorf("-J %t: exit %d, want 1 (stderr %q)", jsonOut, code, errb.String())
		}
		if !strings.Contains(errb.String(), "refused by the test") {
			t.Errorf("-J %t: stderr %q lacks the failed flow's error", jsonOut, errb.String())
		}
		if !jsonOut {
			text := out.String()
			if got := strings.Count(text, "verified=true"); got != 3 {
				t.Errorf("text: %d verified flow lines, want 3:\n%s", got, text)
			}
			if got := strings.Count(text, "error: ") - strings.Count(text, "[SUM]   error: "); got != 1 {
				t.Errorf("text: %d flow error lines, want 1:\n%s", got, text)
			}
			if !strings.Contains(text, "[SUM]   sent") {
				t.Errorf("text: no [SUM] line:\n%s", text)
			}
			continue
		}
		var res struct {
			Error string `json:"error"`
			End   struct {
				Streams []struct {
					Receiver map[string]any `json:"receiver"`
				} `json:"streams"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("JSON output: %v\n%s", err, out.String())
		}
		full := 0
		for _, s := range res.End.Streams {
			if s.Receiver["bytes"] == float64(256<<10) {
				full++
			}
		}
		if len(res.End.Streams) != 4 || full != 3 || !strings.Contains(res.Error, "refused by the test") {
			t.Errorf("JSON: %d streams, %d with 256 KiB received, error %q; want 4, 3, the refusal", len(res.End.Streams), full, res.Error)
		}
	}
}
