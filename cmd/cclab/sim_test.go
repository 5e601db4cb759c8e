package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simRun runs cclab sim with args and -J, and returns the JSON it wrote.
func simRun(t *testing.T, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	if code := runSim(append(args, "-J", "-o", out)); code != 0 {
		t.Fatalf("cclab sim %v: exit %d", args, code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func simJSON(t *testing.T, args ...string) simOutput {
	t.Helper()
	b := simRun(t, args...)
	var s simOutput
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("JSON: %v\n%s", err, b)
	}
	return s
}

func TestSimCommand(t *testing.T) {
	args := []string{"-flows", "2", "-cc", "reno;cubic", "-rate", "10Mbit", "-rtt", "30ms", "-duration", "4s",
		"-udp-flows", "1", "-udp", "cbr:rate=1Mbit", "-hash"}
	a := simJSON(t, append(args, "-seed", "3")...)
	b := simJSON(t, append(args, "-seed", "3")...)
	c := simJSON(t, append(args, "-seed", "4")...)
	if len(a.Flows) != 3 || !strings.Contains(a.Flows[0].Info, "cc=reno") || !strings.Contains(a.Flows[1].Info, "cc=cubic") ||
		!strings.Contains(a.Flows[2].Info, "mode=udp") || len(a.Links) != 2 {
		t.Fatalf("result shape: %+v", a)
	}
	if a.Warmup != 1 || a.Duration != 4 || a.Window != 3 {
		t.Errorf("duration/warm-up/window got %v/%v/%v, want 4/1/3 (default warm-up = duration/4)", a.Duration, a.Warmup, a.Window)
	}
	if a.TraceHash == "" || a.TraceHash != b.TraceHash || a.TraceHash == c.TraceHash {
		t.Errorf("trace hashes seed3 %q, seed3 %q, seed4 %q: want equal, equal, different", a.TraceHash, b.TraceHash, c.TraceHash)
	}
	for _, f := range a.Flows {
		if f.Metrics["mean_throughput"] <= 0 || f.Metrics["total_packets_sent"] <= 0 {
			t.Errorf("flow %s: no throughput measured: %v", f.Name, f.Metrics)
		}
	}
	for _, bad := range [][]string{{"-topology", "ring"}, {"-buffer", "lots"}, {"-traffic", "cbr"}, {"-rtts", "x"}, {"-cc", "nosuch"}} {
		if code := runSim(append(bad, "-duration", "1s", "-o", filepath.Join(t.TempDir(), "x"))); code == 0 {
			t.Errorf("cclab sim %v: exit 0, want an error", bad)
		}
	}
}

func TestSimScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sc.json")
	if err := os.WriteFile(file, []byte(`{"topology": "chain", "hops": 2, "flows": 1, "cross": 1, "rate": "10Mbit", "duration": "9s", "seed": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := simJSON(t, "-scenario", file, "-duration", "3s")
	if len(s.Flows) != 3 || len(s.Links) != 4 || s.Seed != 5 {
		t.Errorf("chain from file: %d flows, %d links, seed %d; want 3, 4, 5", len(s.Flows), len(s.Links), s.Seed)
	}
	if s.Duration != 3 {
		t.Errorf("duration got %v, want 3 (command line overrides the file)", s.Duration)
	}
	if err := os.WriteFile(file, []byte(`{"nosuchflag": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := runSim([]string{"-scenario", file}); code == 0 {
		t.Errorf("unknown flag in scenario file: exit 0, want an error")
	}
}

// TestSimFlagsAndYAMLAgree: cclab sim's flags are only another way to write
// a scenario. The same scenario run from flags, from the YAML the flags
// emit, and from a YAML file written by hand gives byte-identical JSON:
// every metric and the trace hash of every event.
func TestSimFlagsAndYAMLAgree(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"-topology", "chain", "-hops", "2", "-flows", "2", "-cross", "1", "-cc", "reno;cubic",
		"-rate", "10Mbit", "-rtt", "40ms", "-buffer", "20p", "-duration", "3s", "-warmup", "1s", "-stagger", "500ms",
		"-udp-flows", "1", "-udp", "cbr:rate=1Mbit", "-recovery", "sack", "-seed", "7", "-min-rto", "1s"}
	fromFlags := simRun(t, append(flags, "-hash")...)
	emitted := filepath.Join(dir, "emitted.yaml")
	if code := runSim(append(flags, "-emit-scenario", emitted)); code != 0 {
		t.Fatalf("-emit-scenario: exit %d", code)
	}
	fromEmitted := simRun(t, "-scenario", emitted, "-hash")
	hand := filepath.Join(dir, "hand.yaml")
	if err := os.WriteFile(hand, []byte(`name: cclab-sim
duration: 3s
warmup: 1s
seeds: [7]
topology:
  kind: chain
  hops:
    - {rate: 10Mbit, delay: 10ms, queue: "droptail:limit=20p"}
    - {rate: 10Mbit, delay: 10ms, queue: "droptail:limit=20p"}
flows:
  - {name: flow0, cc: reno, recovery: sack, datagram: 1200B, stagger: 500ms, min_rto: 1s}
  - {name: flow1, cc: cubic, recovery: sack, datagram: 1200B, stagger: 500ms, min_rto: 1s}
  - {name: cross0, cc: reno, recovery: sack, datagram: 1200B, stagger: 500ms, min_rto: 1s, path: 0}
  - {name: cross1, cc: cubic, recovery: sack, datagram: 1200B, stagger: 500ms, min_rto: 1s, path: 1}
  - {name: udp0, mode: udp, traffic: "cbr:rate=1Mbit", stagger: 500ms}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fromHand := simRun(t, "-scenario", hand, "-hash")
	if !bytes.Equal(fromFlags, fromEmitted) {
		t.Errorf("flags and emitted YAML differ:\nflags:\n%s\nYAML:\n%s", fromFlags, fromEmitted)
	}
	if !bytes.Equal(fromFlags, fromHand) {
		t.Errorf("flags and hand-written YAML differ:\nflags:\n%s\nYAML:\n%s", fromFlags, fromHand)
	}
	var s simOutput
	if err := json.Unmarshal(fromFlags, &s); err != nil {
		t.Fatal(err)
	}
	if s.TraceHash == "" || len(s.Flows) != 5 || len(s.Links) != 4 {
		t.Errorf("result: hash %q, %d flows, %d links; want a hash, 5 flows, 4 links", s.TraceHash, len(s.Flows), len(s.Links))
	}
	if code := runSim([]string{"-scenario", hand, "-rate", "5Mbit"}); code != 2 {
		t.Errorf("a network flag with a YAML scenario: exit %d, want 2", code)
	}
}

// TestSimSpecRanges: controller and recovery specs are range-checked when
// the flags or the scenario are read: cclab sim exits 2 before simulating.
func TestSimSpecRanges(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nduration: 1s\ntopology:\n  kind: dumbbell\n  bottleneck: {rate: 10Mbit, delay: 10ms}\nflows:\n  - {name: f, cc: \"cubic:beta=2\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badRTO := filepath.Join(dir, "badrto.yaml")
	if err := os.WriteFile(badRTO, []byte("name: bad\nduration: 1s\ntopology:\n  kind: dumbbell\n  bottleneck: {rate: 10Mbit, delay: 10ms}\nflows:\n  - {name: f, min_rto: 0s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flow := range []string{"ack_every: 0", "ack_every: 65", "delayed_ack: 500ms", "recv_window: 2399B", "recv_window: 2GiB",
		"mode: datagram, ack_every: 2", "mode: udp, traffic: \"cbr:rate=1Mbit\", recv_window: 1MiB"} {
		file := filepath.Join(dir, "badrecv.yaml")
		if err := os.WriteFile(file, []byte("name: bad\nduration: 1s\ntopology:\n  kind: dumbbell\n  bottleneck: {rate: 10Mbit, delay: 10ms}\nflows:\n  - {name: f, "+flow+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code := runSim([]string{"-scenario", file}); code != 2 {
			t.Errorf("cclab sim with a flow {%s}: exit %d, want 2", flow, code)
		}
	}
	for _, args := range [][]string{
		{"-cc", "cubic:beta=2", "-duration", "1s"},
		{"-cc", "reno:iw=7930000000000000", "-duration", "1s"},
		{"-recovery", "sack:dupthresh=0", "-duration", "1s"},
		{"-min-rto", "2m", "-duration", "1s"},
		{"-ack-every", "0", "-duration", "1s"},
		{"-ack-every", "65", "-duration", "1s"},
		{"-delayed-ack", "500ms", "-duration", "1s"},
		{"-delayed-ack", "-1ms", "-duration", "1s"},
		{"-recv-window", "2399", "-duration", "1s"},
		{"-recv-window", "2999", "-mss", "1500", "-duration", "1s"},
		{"-recv-window", "2GiB", "-duration", "1s"},
		{"-scenario", bad},
		{"-scenario", badRTO},
	} {
		if code := runSim(args); code != 2 {
			t.Errorf("cclab sim %q: exit %d, want 2", args, code)
		}
	}
}

// TestSimDatagramSize: a flow's datagram size above the transport's default
// of 1200 bytes takes effect (the receiving side used to cut it to 1200 in
// the handshake): payload per packet = datagram − 35 bytes of header.
func TestSimDatagramSize(t *testing.T) {
	for _, size := range []int{1200, 1472} {
		s := simJSON(t, "-mss", fmt.Sprint(size), "-duration", "2s", "-warmup", "0", "-stagger", "0")
		m := s.Flows[0].Metrics
		if got, want := m["total_sent"]/m["total_packets_sent"], float64(size-35); got != want {
			t.Errorf("-mss %d: %.1f payload bytes per packet, want %.0f", size, got, want)
		}
	}
}

// TestSimReceiverSettings: the stream receivers' delayed-ACK policy and
// receive window (-ack-every, -delayed-ack, -recv-window; scenario keys
// ack_every, delayed_ack, recv_window) reach the simulated receivers, from
// flags and from YAML alike, and do what they say: fewer ACKs the more
// segments one ACK covers (the reverse link's total_enqueued), the same
// with -delayed-ack 0 as with -ack-every 1 on a bulk transfer (every
// segment full), and a goodput capped by window / base RTT.
func TestSimReceiverSettings(t *testing.T) {
	base := []string{"-cc", "reno", "-rate", "20Mbit", "-rtt", "40ms", "-duration", "4s", "-warmup", "1s", "-stagger", "0"}
	acks := map[string]float64{}
	for _, set := range [][]string{{"-ack-every", "1"}, {"-delayed-ack", "0"}, {"-ack-every", "2"}, {"-ack-every", "4"}} {
		s := simJSON(t, append(base, set...)...)
		acks[strings.Join(set, " ")] = s.Links[1].Metrics["total_enqueued"]
	}
	if a1, d0, a2, a4 := acks["-ack-every 1"], acks["-delayed-ack 0"], acks["-ack-every 2"], acks["-ack-every 4"]; !(a1 > a2 && a2 > a4) || a1 != d0 {
		t.Errorf("ACKs: -ack-every 1: %v, -delayed-ack 0: %v, 2: %v, 4: %v; want 1 = delayed-ack 0 > 2 > 4", a1, d0, a2, a4)
	}
	s := simJSON(t, append(base, "-recv-window", "64KiB")...)
	if got, limit := s.Flows[0].Metrics["mean_throughput"], 65536*8/0.040; got > limit || got < limit/2 {
		t.Errorf("-recv-window 64KiB: throughput %.0f bit/s, want at most window/RTT = %.0f and above half of it", got, limit)
	}

	dir := t.TempDir()
	flags := append(base, "-ack-every", "3", "-delayed-ack", "200ms", "-recv-window", "1MiB")
	fromFlags := simRun(t, append(flags, "-hash")...)
	emitted := filepath.Join(dir, "emitted.yaml")
	if code := runSim(append(flags, "-emit-scenario", emitted)); code != 0 {
		t.Fatalf("-emit-scenario: exit %d", code)
	}
	if fromEmitted := simRun(t, "-scenario", emitted, "-hash"); !bytes.Equal(fromFlags, fromEmitted) {
		t.Errorf("flags and emitted YAML differ:\nflags:\n%s\nYAML:\n%s", fromFlags, fromEmitted)
	}
	if fromDefault := simRun(t, append(base, "-hash")...); bytes.Equal(fromFlags, fromDefault) {
		t.Errorf("-ack-every 3 -delayed-ack 200ms -recv-window 1MiB changed nothing")
	}
}
