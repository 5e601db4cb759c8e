package liverun

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cclab/clock"
	"cclab/event"
	"cclab/plan"
	"cclab/relay"
	"cclab/scenario"
	"cclab/transport"
	"cclab/tunshell"
)

// linkShell is the link shell a run with kernel flows crosses.
type linkShell struct {
	s   *tunshell.Shell
	tcp net.Listener // the kernel flows' receiver, on the host's end

	mu    sync.Mutex
	conns []net.Conn // the receiver's accepted connections, closed at the end
}

func (l *linkShell) do(f func() error) error { return l.s.Do(f) }
func (l *linkShell) inner() netip.Addr       { return l.s.Addrs().Inner }

// tcpSampleEvery is how often a kernel flow's TCP_INFO is read.
const tcpSampleEvery = 5 * time.Millisecond

// ipv4UDP is the IPv4 and UDP headers' length, bytes; ipv4TCP the IPv4 and
// TCP headers' (no options).
const (
	ipv4UDP = 28
	ipv4TCP = 40
)

// startShell starts the link shell of the run: the relay configuration in
// packet mode (no entries: every flow crosses every hop), an MTU that
// passes each flow's largest packet, and the kernel flows' settings in the
// namespace (sysctls) and its routes.
func (lr *liveRun) startShell(cfg relay.Config, entries []int) error {
	k := len(lr.p.Hops[plan.Fwd])
	mtu := tunshell.DefaultMTU
	var ks *scenario.KernelSettings
	for i := range lr.p.Flows {
		f := &lr.p.Flows[i]
		if !f.EndToEnd(k) {
			return fmt.Errorf("liverun: flow %s crosses hops %d-%d: a run with kernel flows crosses a link shell, whose flows cross every hop", f.Name, f.First, f.Last)
		}
		switch {
		case f.Kernel != nil:
			ks = f.Kernel
			if f.Kernel.MSS > 0 {
				mtu = max(mtu, f.Kernel.MSS+scenario.KernelTimestampOption+ipv4TCP)
			}
			if err := checkCC(f); err != nil {
				return err
			}
		default:
			mtu = max(mtu, max(cmpOr(f.Datagram, transport.DefaultMaxDatagram), f.PLPMTUMax)+ipv4UDP)
		}
	}
	cfg.Listen, cfg.Entries, cfg.Target = "", nil, ""
	cfg.Sink, cfg.InjectWriteLate = lr.links, lr.r.injectLate
	s, err := tunshell.Start(tunshell.Config{Relay: cfg, MTU: mtu})
	if err != nil {
		return fmt.Errorf("liverun: link shell: %v", err)
	}
	lr.closes = append(lr.closes, func() { s.Close() })
	lr.shell = &linkShell{s: s}
	lr.rl, lr.host = s.Relay(), s.Addrs().Host.String()
	if lr.r.onRelay != nil {
		lr.r.onRelay(lr.rl)
	}
	sack, ecn := "0", "2" // tcp_ecn 2: accept ECN when asked, never ask (Linux's default)
	if ks.SACK {
		sack = "1"
	}
	if ks.ECN {
		ecn = "1"
	}
	for _, kv := range [][2]string{{"net.ipv4.tcp_sack", sack}, {"net.ipv4.tcp_ecn", ecn}} {
		if err := s.Sysctl(kv[0], kv[1]); err != nil {
			return fmt.Errorf("liverun: %v", err)
		}
	}
	if err := s.SetTCPRoute(tunshell.TCPRoute{InitCwnd: ks.IW, RTOMin: ks.MinRTO, QuickAck: ks.QuickAck}); err != nil {
		return fmt.Errorf("liverun: %v", err)
	}
	return nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// availableCC lists the kernel's congestion controllers.
func availableCC() []string {
	b, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	return strings.Fields(string(b))
}

// checkCC makes sure a kernel flow's controller is available, loading its
// module (tcp_NAME, as tcp_bbr) if it is not and the process may.
func checkCC(f *plan.Flow) error {
	name := f.Kernel.CC
	if slices.Contains(availableCC(), name) {
		return nil
	}
	if os.Geteuid() == 0 {
		_ = exec.Command("modprobe", "tcp_"+name).Run() // the error is the list below
		if slices.Contains(availableCC(), name) {
			return nil
		}
	}
	return fmt.Errorf("liverun: flow %s: field cc: kernel controller %q is not available (allowed: %s, from /proc/sys/net/ipv4/tcp_available_congestion_control; modprobe tcp_%s as root may add it)",
		f.Name, name, strings.Join(availableCC(), ", "), name)
}

// serveKernel starts the kernel flows' receiver on the host's end of the
// shell: each connection names its flow in its first 8 bytes (the flow
// number, big-endian) and every read after them is a Delivered event.
func (lr *liveRun) serveKernel() error {
	if lr.shell == nil {
		return nil
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort(lr.host, "0"))
	if err != nil {
		return fmt.Errorf("liverun: kernel TCP receiver: %v", err)
	}
	lr.shell.tcp = ln
	lr.closes = append(lr.closes, func() { ln.Close() })
	lr.rwg.Add(1)
	go func() {
		defer lr.rwg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			lr.shell.mu.Lock()
			lr.shell.conns = append(lr.shell.conns, c)
			lr.shell.mu.Unlock()
			lr.rwg.Add(1)
			go func() {
				defer lr.rwg.Done()
				defer c.Close()
				lr.receiveKernel(c)
			}()
		}
	}()
	return nil
}

// receiveKernel reads one kernel flow's connection to its end.
func (lr *liveRun) receiveKernel(c net.Conn) {
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	id := binary.BigEndian.Uint64(hdr[:])
	if id == 0 || id > uint64(len(lr.p.Flows)) || lr.p.Flows[id-1].Kernel == nil {
		return
	}
	num := lr.p.Flows[id-1].MetricID()
	buf := make([]byte, 256<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 && num != 0 {
			e := event.Event{Time: lr.cm.now(), Kind: event.Delivered, Flow: num, Link: -1, Bytes: n}
			lr.mu.Lock()
			lr.col.Record(&e)
			lr.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// stopShell closes the kernel flows' receiver and its connections.
func (lr *liveRun) stopShell() {
	if lr.shell == nil || lr.shell.tcp == nil {
		return
	}
	lr.shell.tcp.Close()
	lr.shell.mu.Lock()
	for _, c := range lr.shell.conns {
		c.Close()
	}
	lr.shell.mu.Unlock()
}

// kernelFlow runs one kernel TCP flow: at its start it connects from the
// namespace with its controller and segment size, sends until its stop,
// closes, and samples its TCP_INFO throughout.
func (lr *liveRun) kernelFlow(s *sender, start, end clock.Time) error {
	f, k := s.f, s.f.Kernel
	if err := sleepUntil(lr.ctx, lr.cm, start.Add(f.Start)); err != nil {
		return err
	}
	stop := end
	if f.Stop > 0 {
		stop = start.Add(f.Stop)
	}
	deadline := lr.cm.wall(stop)
	if min10 := time.Now().Add(10 * time.Second); deadline.Before(min10) {
		deadline = min10 // the handshake may retry until the flow's stop, at least 10 s
	}
	dctx, cancel := context.WithDeadline(lr.ctx, deadline)
	defer cancel()
	var conn *net.TCPConn
	err := lr.shell.do(func() error {
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error { return sockopts(rc, k) }}
		c, err := d.DialContext(dctx, "tcp4", lr.shell.tcp.Addr().String())
		if err == nil {
			conn = c.(*net.TCPConn)
		}
		return err
	})
	if err != nil {
		if lr.ctx.Err() == nil && dctx.Err() != nil {
			return errNotConnected
		}
		return fmt.Errorf("flow %s: kernel TCP: %v", f.Name, err)
	}
	defer conn.Close()
	local, remote := conn.LocalAddr().(*net.TCPAddr).AddrPort(), conn.RemoteAddr().(*net.TCPAddr).AddrPort()
	lr.mu.Lock()
	lr.links.flows[lr.flowKey(local, remote, f)] = f.MetricID()
	lr.mu.Unlock()
	num := f.ID
	if f.Background {
		num = dropFlow
	}
	smp := lr.sampleTCP(conn, num)
	defer smp()
	buf := make([]byte, 128<<10)
	rnd := lr.p.Rand(f.DataStream)
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], rnd.Uint64())
	}
	binary.BigEndian.PutUint64(buf, f.ID)
	_ = conn.SetWriteDeadline(lr.cm.wall(stop))
	for n := 0; ; n++ {
		if _, err := conn.Write(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || lr.ctx.Err() != nil {
				break
			}
			return fmt.Errorf("flow %s: kernel TCP: %v", f.Name, err)
		}
		if n == 0 {
			binary.LittleEndian.PutUint64(buf, rnd.Uint64()) // the header only once
		}
	}
	_ = conn.CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(cmpDur(lr.r.Drain, 5*time.Second)))
	_, _ = io.Copy(io.Discard, conn) // until the receiver closes
	return nil
}

func cmpDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// sockopts sets a kernel flow's controller (TCP_CONGESTION) and segment
// size (TCP_MAXSEG, which Linux counts without the timestamp option)
// before it connects.
func sockopts(rc syscall.RawConn, k *scenario.KernelSettings) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		if serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, k.CC); serr != nil {
			serr = fmt.Errorf("TCP_CONGESTION %s: %v", k.CC, serr)
			return
		}
		if k.MSS > 0 {
			if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, k.MSS+scenario.KernelTimestampOption); serr != nil {
				serr = fmt.Errorf("TCP_MAXSEG %d: %v", k.MSS+scenario.KernelTimestampOption, serr)
			}
		}
	})
	return errors.Join(err, serr)
}

// sampleTCP reads conn's TCP_INFO every tcpSampleEvery and records the
// events between samples (tcpSample.events) as flow num's; the function
// it returns takes a last sample and stops.
func (lr *liveRun) sampleTCP(conn *net.TCPConn, num uint64) func() {
	rc, err := conn.SyscallConn()
	if err != nil {
		return func() {}
	}
	var prev tcpSample
	sample := func() {
		var ti *unix.TCPInfo
		var gerr error
		if err := rc.Control(func(fd uintptr) { ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || gerr != nil {
			return
		}
		cur := fromTCPInfo(ti)
		now := lr.cm.now()
		if num != dropFlow {
			lr.mu.Lock()
			cur.events(&prev, now, num, lr.col.Record)
			lr.mu.Unlock()
		}
		prev = cur
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(tcpSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				sample()
			case <-done:
				sample()
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// fromTCPInfo takes the fields tcpSample keeps.
func fromTCPInfo(ti *unix.TCPInfo) tcpSample {
	return tcpSample{dataSegsOut: ti.Data_segs_out, totalRetrans: ti.Total_retrans, bytesSent: ti.Bytes_sent,
		bytesRetrans: ti.Bytes_retrans, bytesAcked: ti.Bytes_acked, totalRTO: ti.Total_rto, caState: ti.Ca_state,
		cwnd: ti.Snd_cwnd, ssthresh: ti.Snd_ssthresh, mss: ti.Snd_mss, unacked: ti.Unacked, sacked: ti.Sacked,
		lost: ti.Lost, retransOut: ti.Retrans, srtt: ti.Rtt, minRTT: ti.Min_rtt}
}
