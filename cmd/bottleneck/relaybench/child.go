package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"cclab/netio"
	"cclab/relay"
)

// The full-emulation measurement of (d) runs its blaster and its receiver
// as child processes of the benchmark (bench -child blast|receive ...), as
// a sender and a receiver are programs of their own, with their own
// threads, next to the relay.

// child is a running child process of the benchmark.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string // receive: the address it listens on
}

// startChild runs this program with -child role and args; a receiver's
// or a relay's first output line is its address.
func startChild(role string, args ...string) (*child, error) {
	return startChildOn(nil, role, args...)
}

// startChildOn is startChild with the child's CPU affinity set to cpus
// (nil: this process's).
func startChildOn(cpus []int, role string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{"-child", role}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startOn(cmd, cpus); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if role == "receive" || role == "relay" {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.kill()
			return nil, fmt.Errorf("%s: %v", role, err)
		}
		c.addr = strings.TrimSpace(line)
	}
	return c, nil
}

// result closes the child's input (a receiver then stops), reads all it
// writes and waits for it to exit.
func (c *child) result() ([]byte, error) {
	c.in.Close()
	b, err := io.ReadAll(c.out)
	if werr := c.cmd.Wait(); werr != nil {
		return b, werr
	}
	return b, err
}

func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// runChild is the main function of a child process.
func runChild(role string, args []string) {
	fs := flag.NewFlagSet("relaybench -child "+role, flag.ExitOnError)
	to := fs.String("to", "", "blast: destination")
	rate := fs.Float64("rate", 0, "blast: bits/s (0: as fast as possible)")
	size := fs.Int("size", 1500, "datagram size, bytes")
	dur := fs.Duration("dur", 2*time.Second, "blast: how long")
	target := fs.String("target", "", "relay: where to relay to")
	delay := fs.Duration("delay", 0, "relay: link delay")
	queue := fs.String("queue", "", "relay: link queue")
	spin := fs.Duration("spin", 0, "relay: -spin")
	isPlain := fs.Bool("plain", false, "relay: without offloads and coalescing")
	lock := fs.Bool("lock", false, "relay: -lock-thread")
	rt := fs.Bool("realtime", false, "relay: -realtime")
	poll := fs.String("poll", "sleep", "relay: -poll (sleep, busy or wait)")
	coal := fs.Duration("coalesce", 0, "relay: -coalesce (0: default, negative: off)")
	fs.Parse(args)
	switch role {
	case "blast":
		stop := make(chan struct{})
		time.AfterFunc(*dur, func() { close(stop) })
		n, err := blast(*to, *rate, *size, stop, true)
		if err != nil {
			fatal(err)
		}
		fmt.Println(n)
	case "receive":
		receiveChild(*size)
	case "relay":
		lockThread, realtime, pollMode, coalesceFlag = *lock, *rt, *poll, *coal
		relayChild(fullConfig(*target, *rate, *delay, *queue, *spin, *isPlain))
	default:
		fatal(fmt.Errorf("-child %q: want blast, receive or relay", role))
	}
}

// receiveChild listens with GRO, prints its address, and records each
// datagram's arrival — when the application read it and when the kernel
// received it, both on CLOCK_MONOTONIC (arrivalReader) — and sequence number
// until its input closes; then it writes them: a count, 1 if the kernel
// stamped them (else the kernel arrivals are the application's), then
// (application arrival ns, kernel arrival ns, seq) triples, as little-endian
// uint64s.
func receiveChild(size int) {
	c, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	netio.RaiseReceiveBuffer(c, relay.ReceiveBuffer)
	r := newArrivalReader(c, netio.EnableGRO(c))
	fmt.Println(c.LocalAddr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		c.Close()
	}()
	var rec []uint64
	for {
		if rec, err = r.read(rec); err != nil {
			break
		}
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	stamped := uint64(0)
	if r.stamps {
		stamped = 1
	}
	binary.Write(w, binary.LittleEndian, [2]uint64{uint64(len(rec) / 3), stamped})
	binary.Write(w, binary.LittleEndian, rec)
	if err := w.Flush(); err != nil {
		fatal(err)
	}
}

// decodeArrivals parses a receiver child's output: per datagram, its
// arrival at the application and at the kernel, and its sequence number;
// stamped says whether the kernel stamped them.
func decodeArrivals(b []byte) (app, kern []time.Duration, seqs []uint64, stamped bool, err error) {
	r := bytes.NewReader(b)
	var hdr [2]uint64
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, nil, nil, false, fmt.Errorf("receiver output: %v", err)
	}
	n := hdr[0]
	if n > uint64(len(b))/24 {
		return nil, nil, nil, false, errors.New("receiver output: count larger than the data")
	}
	rec := make([]uint64, 3*n)
	if err := binary.Read(r, binary.LittleEndian, rec); err != nil {
		return nil, nil, nil, false, fmt.Errorf("receiver output: %v", err)
	}
	app, kern, seqs = make([]time.Duration, n), make([]time.Duration, n), make([]uint64, n)
	for i := range app {
		app[i], kern[i], seqs[i] = time.Duration(rec[3*i]), time.Duration(rec[3*i+1]), rec[3*i+2]
	}
	return app, kern, seqs, hdr[1] == 1, nil
}
