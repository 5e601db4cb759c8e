package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runKernel transfers n bytes over kernel TCP on loopback with iperf3, one
// stream: a server (iperf3 -s -1) and a client (iperf3 -c -n n -J) as child
// processes. The goodput is what the server received over its time
// (end.sum_received of the client's JSON, which carries the server's
// figures); the CPU is both processes' user plus system time (their
// rusage: the kernel's TCP work on loopback runs in their context), per
// GiB of n.
func runKernel(ctx context.Context, n int64) (quicResult, float64, error) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return quicResult{}, 0, fmt.Errorf("-vs kernel needs iperf3 (apt-get install iperf3): %v", err)
	}
	port, err := freeTCPPort()
	if err != nil {
		return quicResult{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // (a stuck iperf3 is killed)
	defer cancel()
	srv := exec.CommandContext(ctx, "iperf3", "-s", "-1", "--forceflush", "-B", "127.0.0.1", "-p", port)
	out, err := srv.StdoutPipe()
	if err != nil {
		return quicResult{}, 0, err
	}
	if err := srv.Start(); err != nil {
		return quicResult{}, 0, fmt.Errorf("iperf3 -s: %v", err)
	}
	defer func() { _ = srv.Wait() }() // (waited for below; this reaps it on the error paths)
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "Server listening") {
	}
	go func() { _, _ = io.Copy(io.Discard, out) }() // (the server's report is not needed)
	cli := exec.CommandContext(ctx, "iperf3", "-c", "127.0.0.1", "-p", port, "-n", strconv.FormatInt(n, 10), "-J")
	js, err := cli.Output()
	if err != nil {
		_ = srv.Process.Kill()
		return quicResult{}, 0, fmt.Errorf("iperf3 -c: %v", err)
	}
	if err := srv.Wait(); err != nil {
		return quicResult{}, 0, fmt.Errorf("iperf3 -s: %v", err)
	}
	var r struct {
		End struct {
			SumReceived struct {
				Seconds float64 `json:"seconds"`
				Bytes   int64   `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(js, &r); err != nil || r.End.SumReceived.Seconds <= 0 {
		return quicResult{}, 0, fmt.Errorf("iperf3 -c -J: no end.sum_received in its output (%v)", err)
	}
	cpu := srv.ProcessState.UserTime() + srv.ProcessState.SystemTime() + cli.ProcessState.UserTime() + cli.ProcessState.SystemTime()
	res := quicResult{Bytes: r.End.SumReceived.Bytes, Elapsed: time.Duration(r.End.SumReceived.Seconds * float64(time.Second))}
	return res, cpu.Seconds() / (float64(n) / (1 << 30)), nil
}

// freeTCPPort returns a loopback TCP port free at the time of the call.
func freeTCPPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
