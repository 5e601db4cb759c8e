//go:build adversary && linux

package perf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"cclab/internal/testenv"
)

// handshake opens a connection to srv from c as a client would (Initial,
// Retry, Initial with the token, Accept) and returns the server's CID.
func handshake(c *net.UDPConn, rnd *rand.Rand) ([8]byte, error) {
	var scid [8]byte
	dcid, cid := rnd.Uint64(), rnd.Uint64()
	req := Request{V: Version, Seed: 1}.encode()
	buf := make([]byte, 2048)
	var token []byte
	for try := 0; try < 2; try++ {
		if _, err := c.Write(initialPacket(dcid, cid, 1200, req, token)); err != nil {
			return scid, err
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			return scid, err
		}
		p := buf[:n]
		switch {
		case n > 18 && p[0] == 2 && p[1] == 5: // Retry
			l, k, err := quicvarint.Parse(p[18:])
			if err != nil || 18+k+int(l) > n {
				return scid, errors.New("malformed Retry")
			}
			token = append([]byte(nil), p[18+k:18+k+int(l)]...)
		case n >= 18 && p[0] == 2 && p[1] == 2: // Accept
			copy(scid[:], p[10:18])
			return scid, nil
		default:
			return scid, fmt.Errorf("unexpected answer % x", p[:min(n, 12)])
		}
	}
	return scid, errors.New("no Accept after the Retry")
}

// vmRSS returns a process's resident set size, bytes.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var n int64
			fmt.Sscanf(strings.TrimSpace(kb), "%d", &n)
			return n << 10, nil
		}
	}
	return 0, errors.New("no VmRSS")
}

// Out-of-order attack size and the receiver's documented bound (docs/security.md).
const (
	oooConns   = 64      // attacker connections, each from its own address
	oooPerConn = 8 << 20 // out-of-order bytes each pushes (its whole receive window)
	// The transport keeps the out-of-order span below twice its 64 MiB
	// budget (transport.DefaultMaxOOOBytes); receive rings and the Go
	// heap's growth add up to as much again: the bound is 6× the budget,
	// against 8 MiB × 64 = 512 MiB pushed (~0.9 MiB of RSS per MiB pushed
	// without a budget).
	oooRSSBound = 6 * 64 << 20
)

// TestAdversaryOutOfOrderMemory: attacker connections each push a whole
// receive window of out-of-order data (every segment but the first) at a
// receiver process; its RSS must stay under a documented bound (one budget
// of out-of-order bytes per endpoint).
func TestAdversaryOutOfOrderMemory(t *testing.T) {
	bin := testenv.BuildTools(t, "cclab/cmd/receiver")
	cmd := exec.Command(filepath.Join(bin, "receiver"), "-listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	var srv netip.AddrPort
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "receiver: listening on "); ok {
			srv = netip.MustParseAddrPort(strings.Fields(a)[0])
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if !srv.IsValid() {
		t.Fatal("receiver did not say where it listens")
	}
	before, err := vmRSS(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	var pushed int64
	const seg = 1100
	for i := range oooConns {
		la := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 5, byte(i >> 8), byte(1 + i&0xff)}), 0)
		c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(la), net.UDPAddrFromAddrPort(srv))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		scid, err := handshake(c, rnd)
		if err != nil {
			t.Fatalf("attacker %d: handshake: %v", i, err)
		}
		// Every segment of the window but the first: all out of order.
		pn := uint64(0)
		for off := uint64(seg); off+seg <= oooPerConn; off += seg {
			if _, err := c.Write(shortPacket(scid, pn, off, make([]byte, seg))); err == nil {
				pushed += seg
			}
			pn++
			if pn%64 == 0 {
				time.Sleep(50 * time.Microsecond) // within the receiver's socket buffer
			}
		}
	}
	time.Sleep(2 * time.Second) // the receiver drains its socket
	after, err := vmRSS(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("out-of-order attack: %d connections pushed %d MiB out of order; receiver RSS %d MiB before, %d MiB after (bound %d MiB)",
		oooConns, pushed>>20, before>>20, after>>20, oooRSSBound>>20)
	if after > oooRSSBound {
		t.Errorf("receiver RSS %d MiB after the attack, want at most %d MiB", after>>20, oooRSSBound>>20)
	}
}
