// Command relaybench measures cmd/bottleneck's relay engine over loopback and
// prints, side by side in one run:
//
//	(a) delivered-rate error at 10, 100 and 500 Mbit/s configured,
//	(b) added-delay error (median, p99) against the configured delay,
//	(c) the relay's maximum forwarding rate (packets/s) against a bare
//	    batched UDP forwarder, and their ratio,
//	(d) with 1500-byte datagrams from a GSO sender and the kernel's
//	    offloads (GRO reads, GSO writes) on both: the maximum forwarding
//	    rate against a bare GRO/GSO forwarder, and the relay with full
//	    emulation (rate, delay, queue) at 1 Gbit/s: delivered rate and
//	    each datagram's receive time against its modelled arrival.
//
// Usage: go run ./cmd/bottleneck/relaybench [-rates 10Mbit,100Mbit,500Mbit] [-delay 10ms] [-dur 2s] [-only c,d]
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cclab/internal/units"
	"cclab/link"
	"cclab/netio"
	"cclab/relay"
)

var base = time.Now()

var lateHist string

var lockThread bool

var realtime bool

// pollMode is -poll: sleep (readers and a sleeping scheduler), busy (the
// busy-polling loop, relay.Config.BusyPoll) or wait (the waiting loop,
// relay.Config.WaitPoll).
var pollMode = "sleep"

// coalesceFlag is -coalesce: the relay's write coalescing bound
// (relay.Config.Coalesce: 0 default, negative off).
var coalesceFlag time.Duration

func since() time.Duration { return time.Since(base) }

func main() {
	rates := flag.String("rates", "10Mbit,100Mbit,500Mbit", "configured rates for (a), comma-separated")
	delay := flag.Duration("delay", 10*time.Millisecond, "configured delay for (b)")
	dur := flag.Duration("dur", 2*time.Second, "duration of each measurement")
	size := flag.Int("size", 1200, "datagram size for (a) and (b), bytes")
	fwdSize := flag.Int("fwd-size", 100, "datagram size for (c), bytes")
	spin := flag.Duration("spin", 0, "relay -spin: 0 = auto (learned), negative = off, else fixed")
	lock := flag.Bool("lock", false, "relay -lock-thread")
	rt := flag.Bool("realtime", false, "relay -realtime (SCHED_FIFO scheduler thread; needs root or CAP_SYS_NICE)")
	poll := flag.String("poll", "sleep", "relay -poll: sleep (reader goroutines and a sleeping scheduler), busy (one busy-polling loop on a locked thread) or wait (that loop, blocking in epoll when idle; with -realtime on a SCHED_FIFO thread)")
	coalesce := flag.Duration("coalesce", relay.DefaultCoalesce, "relay -coalesce (0 = write each packet at its instant)")
	rounds := flag.Int("rounds", 3, "interleaved rounds of (c) and (d)")
	bigSize := flag.Int("big-size", 1500, "datagram size for (d), bytes")
	fullRate := flag.String("full-rate", "1Gbit", "link rate of (d)'s full emulation")
	fullQueue := flag.String("full-queue", "droptail:1000p", "queue of (d)'s full emulation")
	offered := flag.Float64("offered", 1.05, "(d): offered load, times the link rate")
	only := flag.String("only", "a,b,c,d", "sections to run, comma-separated: a, b, c, d, full ((d)'s full emulation alone), floor (the machine's wake-up lateness without a relay)")
	relayModes := flag.String("relay", "in,proc", "(d) full emulation: where the relay runs, comma-separated: in (this process), proc (a process of its own)")
	affinity := flag.Bool("affinity", false, "(d) full emulation, -relay proc: pin the relay process to the last CPU and the benchmark, blaster and receiver to the others")
	withPlain := flag.Bool("full-plain", true, "(d) full emulation: also measure the plain relay (no GRO, GSO, coalescing)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (every goroutine: blaster, relay, receiver) to this file")
	if len(os.Args) > 2 && os.Args[1] == "-child" { // internal: (d)'s blaster or receiver process
		runChild(os.Args[2], os.Args[3:])
		return
	}
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	run := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		run[strings.TrimSpace(s)] = true
	}
	lockThread, realtime = *lock, *rt
	switch *poll {
	case "sleep", "busy", "wait":
		pollMode = *poll
	default:
		fmt.Fprintf(os.Stderr, "invalid value %q for flag -poll: want sleep, busy or wait\n", *poll)
		os.Exit(2)
	}
	coalesceFlag = *coalesce
	if coalesceFlag == 0 {
		coalesceFlag = -1
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bottleneck benchmark (loopback, GOMAXPROCS=%d, %v per measurement, load average %s)\n\n", numCPU(), *dur, strings.Join(strings.Fields(string(la))[:min(3, len(strings.Fields(string(la))))], " "))

	if run["a"] {
		sectionA(*rates, *size, *dur, *spin)
	}
	if run["b"] {
		sectionB(*delay, *size, *dur, *spin)
	}
	if run["c"] {
		sectionC(*fwdSize, *dur, *spin, *rounds)
	}
	if run["floor"] {
		sectionFloor(*dur)
	}
	if run["d"] {
		runOffload(*bigSize, *dur, *spin, *rounds)
	}
	if run["d"] || run["full"] {
		fr, err := units.ParseRate(*fullRate)
		if err != nil {
			fatal(fmt.Errorf("-full-rate: %v", err))
		}
		var modes []string
		for _, m := range strings.Split(*relayModes, ",") {
			switch m = strings.TrimSpace(m); m {
			case modeInProc, modeProc:
				modes = append(modes, m)
			default:
				fmt.Fprintf(os.Stderr, "invalid value %q for flag -relay: want in, proc or in,proc\n", *relayModes)
				os.Exit(2)
			}
		}
		if *affinity && !hasAffinity {
			fmt.Fprintln(os.Stderr, "invalid flag -affinity: CPU affinity needs Linux")
			os.Exit(2)
		}
		runFull(fullOpts{size: *bigSize, rate: fr, offeredX: *offered, delay: *delay, queue: *fullQueue, dur: *dur, spin: *spin,
			rounds: *rounds, modes: modes, affinity: *affinity, plain: *withPlain})
	}
}

// sectionFloor prints the machine's own wake-up lateness (wakeFloor), the
// floor under any relay's write lateness at this load.
func sectionFloor(dur time.Duration) {
	fmt.Printf("(floor) wake-up lateness of a thread acting every 50µs, no relay (locked thread, 1 ns timer slack), %v each:\n", dur)
	for _, spin := range []bool{false, true} {
		la, _ := os.ReadFile("/proc/loadavg")
		l := wakeFloor(50*time.Microsecond, dur, spin)
		if len(l) == 0 {
			fmt.Println("    not measured on this system")
			return
		}
		name := "sleeping (clock_nanosleep)"
		if spin {
			name = "busy-polling the clock"
		}
		n := len(l)
		fmt.Printf("    %-27s load %s: median %v, p99 %v, p99.9 %v, max %v (n=%d)\n", name, strings.Fields(string(la))[0], l[n/2], l[n*99/100], l[n*999/1000], l[n-1], n)
	}
}

func sectionA(rates string, size int, dur, spin time.Duration) {
	fmt.Printf("(a) delivered rate vs configured (queue droptail:100000p, offered 1.2x, %d-byte datagrams + IP/UDP headers)\n", size)
	fmt.Printf("    %-10s %-14s %-10s\n", "configured", "delivered", "error")
	for _, s := range strings.Split(rates, ",") {
		r, err := units.ParseRate(s)
		if err != nil {
			fatal(err)
		}
		got, diag, err := measureRate(r, size, dur, spin)
		if err != nil {
			fatal(err)
		}
		fmt.Printf("    %-10s %-14s %+8.3f%%   (%s)\n", units.FormatRate(r), units.FormatRate(got), 100*(got/r-1), diag)
	}

}

func sectionB(delay time.Duration, size int, dur, spin time.Duration) {
	fmt.Printf("\n(b) added one-way delay vs configured %v (unlimited rate, 1 datagram/ms)\n", delay)
	for _, d := range []time.Duration{0, delay} {
		med, p99, min, n, err := measureDelay(d, size, dur, spin)
		if err != nil {
			fatal(err)
		}
		label := "configured 0 (relay+loopback overhead)"
		if d > 0 {
			label = fmt.Sprintf("configured %v", d)
		}
		fmt.Printf("    %-40s error median %8v  p99 %8v  min %8v  (n=%d)\n", label, med, p99, min, n)
		fmt.Printf("    %-40s relay write lateness vs modelled instant: %s\n", "", lateHist)
	}

}

func sectionC(fwdSize int, dur, spin time.Duration, rounds int) {
	fmt.Printf("\n(c) maximum forwarding rate, %d-byte datagrams, blaster as fast as possible (plain sendmmsg), delivered packets/s at the receiver;\n    relay and bare forwarder with the same batching (recvmmsg with GRO, sendmmsg with GSO runs)\n", fwdSize)
	// Interleave rounds so that changes in machine load hit both alike; report medians.
	var bares, rels []float64
	for i := 0; i < rounds; i++ {
		bare, err := measureForward(fwdBare, fwdSize, dur, spin, false)
		if err != nil {
			fatal(err)
		}
		rel, err := measureForward(fwdRelay, fwdSize, dur, spin, false)
		if err != nil {
			fatal(err)
		}
		bares, rels = append(bares, bare), append(rels, rel)
	}
	bare, rel := median(bares), median(rels)
	fmt.Printf("    bare batched forwarder: %10.0f packets/s  (median of %d: %s)\n", bare, rounds, list(bares))
	fmt.Printf("    relay (unlimited link): %10.0f packets/s  (median of %d: %s)\n", rel, rounds, list(rels))
	fmt.Printf("    ratio relay/bare:       %10.3f\n", rel/bare)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func list(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.0f", x))
	}
	return strings.Join(parts, " ")
}

func numCPU() int { return runtimeGOMAXPROCS() }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "relaybench:", err)
	os.Exit(1)
}

// sink counts datagrams and records one-way delays from embedded timestamps.
type sink struct {
	conn    *netio.UDPConn
	packets atomic.Int64
	bytes   atomic.Int64
	mu      sync.Mutex
	first   time.Duration // receive time of the first datagram counted
	last    time.Duration
	lastB   int64 // bytes received up to and including the last datagram, excluding the first
	delays  []time.Duration
	record  bool
	times   []time.Duration // receive time of every datagram (rate measurement)
	done    chan struct{}
}

// newSink listens on loopback, with GRO where the kernel has it (the relay
// writes GSO runs), and counts (and with record, timestamps) every datagram.
func newSink(record bool) (*sink, error) {
	c, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	netio.RaiseReceiveBuffer(c, relay.ReceiveBuffer)
	s := &sink{conn: c, record: record, done: make(chan struct{})}
	n, size := 64, 2048
	if netio.EnableGRO(c) {
		n, size = 16, netio.GROBufSize
	}
	go func() {
		defer close(s.done)
		ms := relay.NewBatch(n, size)
		for {
			n, err := c.ReadBatch(ms)
			if err != nil {
				return
			}
			now := since()
			s.mu.Lock()
			for i := range ms[:n] {
				for k := range ms[i].Count() {
					s.add(ms[i].Datagram(k), now)
				}
			}
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// add counts datagram d received at now. Called with mu held.
func (s *sink) add(d []byte, now time.Duration) {
	if s.packets.Load() == 0 {
		s.first = now
	} else {
		s.lastB += int64(len(d))
	}
	s.last = now
	if s.times != nil {
		s.times = append(s.times, now)
	}
	s.packets.Add(1)
	s.bytes.Add(int64(len(d)))
	if s.record && len(d) >= 8 {
		s.delays = append(s.delays, now-time.Duration(binary.BigEndian.Uint64(d)))
	}
}

func (s *sink) close() { s.conn.Close(); <-s.done }

// blast sends size-byte datagrams to addr at rate bits/s (0 = as fast as
// possible) until stop, in batches of plain sendmmsg or, with gso, in GSO
// runs, each datagram stamped with its send time and a sequence number. It
// returns the datagrams sent.
func blast(addr string, rate float64, size int, stop <-chan struct{}, gso bool) (int64, error) {
	c, err := netio.DialUDP("127.0.0.1:0", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.Raw().SetWriteBuffer(relay.SocketBuffer)
	var g *netio.GSOWriter
	if gso {
		if g = netio.NewGSOWriter(c); g == nil {
			return 0, errors.New("no UDP GSO on this system (needed by the GSO blaster)")
		}
	}
	const batch = 32
	ms := make([]netio.Message, batch)
	for i := range ms {
		ms[i] = netio.Message{Buf: make([]byte, size), N: size}
	}
	start := since()
	var sent int64
	for {
		select {
		case <-stop:
			return sent, nil
		default:
		}
		k := batch
		if rate > 0 {
			due := int64((since() - start).Seconds() * rate / 8 / float64(size))
			if due <= sent {
				time.Sleep(50 * time.Microsecond)
				continue
			}
			k = int(min(due-sent, batch))
		}
		now := uint64(since())
		for i := 0; i < k; i++ {
			binary.BigEndian.PutUint64(ms[i].Buf, now)
			if size >= 16 {
				binary.BigEndian.PutUint64(ms[i].Buf[8:], uint64(sent)+uint64(i))
			}
		}
		var n int
		if g != nil {
			n, _, err = g.WriteMessages(ms[:k])
		} else {
			n, err = c.WriteBatch(ms[:k])
		}
		sent += int64(n)
		if err != nil && !errors.Is(err, netio.ErrClosed) {
			continue // ECONNREFUSED etc. from ICMP: keep going
		}
	}
}

func startRelay(target string, hop link.Config, spin time.Duration) (*relay.Relay, error) {
	return startRelayConfig(relay.Config{Target: target, Spin: spin, Hops: [2][]link.Config{{hop}}})
}

// startRelayConfig starts a relay with cfg on loopback.
func startRelayConfig(cfg relay.Config) (*relay.Relay, error) {
	cfg.Listen, cfg.LockThread, cfg.Realtime = "127.0.0.1:0", lockThread, realtime
	cfg.BusyPoll, cfg.WaitPoll = pollMode == "busy", pollMode == "wait"
	if cfg.Coalesce == 0 {
		cfg.Coalesce = coalesceFlag
	}
	r, err := relay.New(cfg)
	if err != nil {
		return nil, err
	}
	r.Start()
	return r, nil
}

// plain turns off what the relay gained for high rates (GRO, GSO, write
// coalescing), as it was before them: the "before" of (d).
func plain(cfg relay.Config) relay.Config {
	cfg.NoOffload, cfg.Coalesce = true, -1
	return cfg
}

func measureRate(rate float64, size int, dur, spin time.Duration) (float64, string, error) {
	s, err := newSink(false)
	if err != nil {
		return 0, "", err
	}
	defer s.close()
	s.mu.Lock()
	s.times = make([]time.Duration, 0, int(rate/8/float64(size)*dur.Seconds()*1.1)+16)
	s.mu.Unlock()
	r, err := startRelay(s.conn.LocalAddr().String(), link.Config{Rate: rate, Queue: "droptail:100000p"}, spin)
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	t0 := time.Now()
	go func() { _, err := blast(r.Addr().String(), rate*1.2, size, stop, false); errc <- err }()
	time.Sleep(dur)
	st := r.HopStats(relay.Fwd)[0]
	el := time.Since(t0).Seconds()
	cn := r.Counters()
	close(stop)
	if err := <-errc; err != nil {
		return 0, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last <= s.first {
		return 0, "", fmt.Errorf("rate %v: too few datagrams received", rate)
	}
	// Once the queue has built up the link is saturated and deliveries are
	// back to back: rate = datagrams received after the one at a quarter of
	// the run, over the time since it (all datagrams have the same size,
	// counted on the link as payload + the relay's per-datagram overhead).
	ts := s.times
	if len(ts) < 100 {
		return 0, "", fmt.Errorf("rate %v: too few datagrams received", rate)
	}
	a := len(ts) / 4
	got := float64(len(ts)-1-a) * float64(size+r.Overhead()) * 8 / (ts[len(ts)-1] - ts[a]).Seconds()
	diag := fmt.Sprintf("relay received %s, link busy %.1f%%, queue %d at the end",
		units.FormatRate(float64(cn.ReceivedBytes[relay.Fwd])*8/el), 100*st.BusyTime.Seconds()/el, st.QueueLen)
	return got, diag, nil
}

// lateSummary gives the relay's write lateness against the modelled
// instants: median, 99th and 99.9th percentiles (from the fine histogram,
// within 6.25 %) and the maximum; and how long its batched writes took.
func lateSummary(c relay.Counters) string {
	return fmt.Sprintf("median %v, p99 %v, p99.9 %v, max %v (%d datagrams); the writes took median %v, p99 %v, p99.9 %v",
		c.WriteLate.P50, c.WriteLate.P99, c.WriteLate.P999, c.WriteLate.Max, c.WriteLate.Hist.Count(), c.SendTime.P50, c.SendTime.P99, c.SendTime.P999)
}

// sleepLateSummary gives how late the relay's scheduler woke from its
// sleeps (median, p99, p99.9), its lead, and how long it then waited for
// the relay's lock (relay.Counters); with busy polling, how long the
// loop's passes took instead; with the waiting loop, both its waits'
// lateness and its passes.
func sleepLateSummary(c relay.Counters) string {
	if n := c.Loop.Hist.Count(); n > 0 && c.LoopWaits > 0 {
		return fmt.Sprintf("waits median %v, p99 %v, p99.9 %v (%d waits, %d timed out; %d rests); lead %v; passes (from the end of a wait) median %v, p99 %v, p99.9 %v (%d)",
			c.SleepLate.P50, c.SleepLate.P99, c.SleepLate.P999, c.LoopWaits, c.SleepLate.Hist.Count(), c.LoopRests, c.Lead, c.Loop.P50, c.Loop.P99, c.Loop.P999, n)
	}
	if n := c.Loop.Hist.Count(); n > 0 {
		return fmt.Sprintf("none (busy polling); loop passes median %v, p99 %v, p99.9 %v (%d passes)", c.Loop.P50, c.Loop.P99, c.Loop.P999, n)
	}
	return fmt.Sprintf("median %v, p99 %v, p99.9 %v (%d sleeps); lead %v; then waiting for the lock: median %v, p99 %v, p99.9 %v",
		c.SleepLate.P50, c.SleepLate.P99, c.SleepLate.P999, c.SleepLate.Hist.Count(), c.Lead, c.LockWait.P50, c.LockWait.P99, c.LockWait.P999)
}

// readLateSummary gives the relay's read lateness against the kernel's
// receive stamps (per read message): median, p99, p99.9, maximum.
func readLateSummary(c relay.Counters) string {
	return fmt.Sprintf("median %v, p99 %v, p99.9 %v, max %v (%d messages)", c.ReadLate.P50, c.ReadLate.P99, c.ReadLate.P999, c.ReadLate.Max, c.ReadLate.Hist.Count())
}

func measureDelay(delay time.Duration, size int, dur, spin time.Duration) (med, p99, minE time.Duration, n int, err error) {
	s, err := newSink(true)
	if err != nil {
		return
	}
	defer s.close()
	r, err := startRelay(s.conn.LocalAddr().String(), link.Config{Delay: delay}, spin)
	if err != nil {
		return
	}
	defer func() { lateHist = lateSummary(r.Counters()); r.Close() }()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { _, err := blast(r.Addr().String(), float64(size)*8*1000, size, stop, false); errc <- err }()
	time.Sleep(dur)
	close(stop)
	if err = <-errc; err != nil {
		return
	}
	time.Sleep(delay + 50*time.Millisecond)
	s.mu.Lock()
	ds := append([]time.Duration(nil), s.delays...)
	s.mu.Unlock()
	if len(ds) == 0 {
		err = fmt.Errorf("delay %v: nothing received", delay)
		return
	}
	for i := range ds {
		ds[i] -= delay
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100], ds[0], len(ds), nil
}

// Forwarders measured by measureForward.
const (
	fwdBare       = iota // bareOffloadForward
	fwdRelay             // the relay, unlimited link
	fwdRelayPlain        // the relay without offloads or coalescing (plain)
)

// measureForward runs a blaster as fast as possible (plain sendmmsg, or GSO
// runs with gso) through a forwarder (fwdBare, fwdRelay, fwdRelayPlain) and
// returns the packets/s the receiver got.
func measureForward(fwd int, size int, dur, spin time.Duration, gso bool) (float64, error) {
	s, err := newSink(false)
	if err != nil {
		return 0, err
	}
	defer s.close()
	var addr string
	if fwd == fwdBare {
		a, stop, err := bareOffloadForward(s.conn.LocalAddr().String())
		if err != nil {
			return 0, err
		}
		defer stop()
		addr = a
	} else {
		cfg := relay.Config{Target: s.conn.LocalAddr().String(), Spin: spin,
			Hops: [2][]link.Config{{{Queue: "droptail:100000p"}}}}
		if fwd == fwdRelayPlain {
			cfg = plain(cfg)
		}
		r, err := startRelayConfig(cfg)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		addr = r.Addr().String()
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { _, err := blast(addr, 0, size, stop, gso); errc <- err }()
	time.Sleep(dur / 4) // warm up
	p0, t0 := s.packets.Load(), time.Now()
	time.Sleep(dur)
	p1, t1 := s.packets.Load(), time.Now()
	close(stop)
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(p1-p0) / t1.Sub(t0).Seconds(), nil
}
