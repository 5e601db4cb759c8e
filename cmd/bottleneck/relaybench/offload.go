package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/units"
	"cclab/link"
	"cclab/netio"
	"cclab/relay"
)

// Section (d): large datagrams with the kernel's offloads, as a GSO sender
// (cclab's transport, quic-go) produces them: the blaster sends GSO runs,
// the relay reads with GRO and writes with GSO, the receiver reads with GRO.

// bareOffloadForward is the reference of (c) and (d), with the relay's
// batching: one goroutine reading batches (with GRO where the kernel has
// it) from the listening socket and writing them to the target on a
// connected socket (with GSO runs where the kernel has it), no model.
func bareOffloadForward(target string) (addr string, stop func(), err error) {
	ln, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	up, err := netio.DialUDP("", target)
	if err != nil {
		ln.Close()
		return "", nil, err
	}
	netio.RaiseReceiveBuffer(ln, relay.ReceiveBuffer) // as the relay does
	up.Raw().SetWriteBuffer(relay.SocketBuffer)
	gro := netio.EnableGRO(ln)
	g := netio.NewGSOWriter(up)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, size := 64, 9216
		if gro {
			n, size = 16, netio.GROBufSize
		}
		ms := relay.NewBatch(n, size)
		out := make([]netio.Message, 0, 16*64)
		for {
			k, err := ln.ReadBatch(ms)
			if err != nil {
				return
			}
			out = out[:0]
			for i := range ms[:k] {
				for j := range ms[i].Count() {
					d := ms[i].Datagram(j)
					out = append(out, netio.Message{Buf: d, N: len(d), ECN: ms[i].ECN})
				}
			}
			if g != nil {
				if _, _, err := g.WriteMessages(out); errors.Is(err, netio.ErrGSOUnsupported) {
					g = nil
				}
				continue
			}
			up.WriteBatch(out)
		}
	}()
	return ln.LocalAddr().String(), func() { ln.Close(); up.Close(); <-done }, nil
}

// fullResult is one run of (d2).
type fullResult struct {
	delivered      float64       // bits/s (UDP payload + the relay's overhead, as the link counts)
	errP50, errP99 time.Duration // receive time (the kernel's) minus the modelled arrival instant
	errP999        time.Duration
	errMax, errMin time.Duration
	appP50, appP99 time.Duration // the same with the receiving application's time
	appMax         time.Duration
	stamped        bool // the kernel stamped arrivals (else errP* are the application's)
	matched        int
	late           string // the relay's write lateness
	readLate       string // the relay's read lateness
	sleepLate      string // the relay scheduler's sleep lateness and lead
	procs, cpus    int    // the relay process's GOMAXPROCS and CPUs (0: in this process)
	mallocs        uint64 // heap allocations in the relay's process while relaying
	gcs            uint32 // garbage collections in it meanwhile
	gcPause        time.Duration
	cpu, wall      time.Duration // the relay's (or, in this process, the benchmark's) CPU time while relaying, and how long
	perRead        float64
	perWrite       float64
	drops          int64 // at the link (queue overflow)
	lostAfter      int64 // written by the relay, not received (the receiver's socket buffer overflowed)
	lostBefore     int64 // sent by the blaster, not read by the relay (its socket buffer overflowed)
}

// relayRun is what the full emulation learns from the relay, in this
// process or in a relay child process.
type relayRun struct {
	Received   int64         `json:"received"`    // datagrams read (forward)
	Sent       int64         `json:"sent"`        // datagrams written (forward)
	ReadCalls  int64         `json:"read_calls"`  // batched reads
	WriteCalls int64         `json:"write_calls"` // batched writes
	Late       string        `json:"late"`        // write lateness (lateSummary)
	ReadLate   string        `json:"read_late"`   // read lateness (readLateSummary)
	SleepLate  string        `json:"sleep_late"`  // the scheduler's sleep lateness and lead (sleepLateSummary)
	Drops      int64         `json:"drops"`       // link drops
	Overhead   int           `json:"overhead"`    // bytes per datagram on the link beyond its payload
	Offset     time.Duration `json:"offset"`      // relay clock − CLOCK_MONOTONIC
	Procs      int           `json:"procs"`       // the relay process's GOMAXPROCS
	CPUs       int           `json:"cpus"`        // CPUs the relay process may use (runtime.NumCPU)
	Mallocs    uint64        `json:"mallocs"`     // heap allocations in the process while relaying
	GCs        uint32        `json:"gcs"`         // garbage collections in the process while relaying
	GCPause    time.Duration `json:"gc_pause"`    // their stop-the-world pauses, total
	CPU        time.Duration `json:"cpu"`         // CPU time the process used while relaying (user and system)
	Wall       time.Duration `json:"wall"`        // how long it relayed
	// Deps[id] is the modelled arrival at the far end of the link of the
	// relay's packet id (the relay numbers datagrams from 1 in the order
	// it reads them); 0: none.
	Deps []clock.Time `json:"-"`
}

// fullConfig is the relay configuration of the full emulation: one forward
// hop of rate bits/s, delay and queue, relaying to target.
func fullConfig(target string, rate float64, delay time.Duration, queue string, spin time.Duration, isPlain bool) relay.Config {
	cfg := relay.Config{Target: target, Spin: spin, Hops: [2][]link.Config{{{Rate: rate, Delay: delay, Queue: queue}}}}
	if isPlain {
		cfg = plain(cfg)
	}
	return cfg
}

// startFullRelay starts a relay with cfg in this process that records every
// packet's modelled arrival (its hop's Departure event); finish stops it
// and returns what the relay did.
func startFullRelay(cfg relay.Config, capacity int) (addr string, finish func() relayRun, err error) {
	var mu sync.Mutex
	deps := make([]clock.Time, capacity)
	var drops atomic.Int64
	cfg.Sink = event.Func(func(e *event.Event) {
		switch e.Kind {
		case event.Departure:
			mu.Lock()
			for uint64(len(deps)) <= e.Seq {
				deps = append(deps, 0)
			}
			deps[e.Seq] = e.Time
			mu.Unlock()
		case event.Drop:
			drops.Add(1)
		}
	})
	r, err := startRelayConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	offset := clockOffset(r)
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, wall0 := processCPU(), time.Now()
	return r.Addr().String(), func() relayRun {
		cpu, wall := processCPU()-cpu0, time.Since(wall0)
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		cn := r.Counters()
		r.Close()
		mu.Lock()
		defer mu.Unlock()
		return relayRun{Received: cn.Received[relay.Fwd], Sent: cn.Sent[relay.Fwd], ReadCalls: cn.ReadCalls,
			WriteCalls: cn.WriteCalls, Late: lateSummary(cn), ReadLate: readLateSummary(cn), SleepLate: sleepLateSummary(cn), Drops: drops.Load(), Overhead: r.Overhead(),
			Offset: offset, Deps: deps, Mallocs: m1.Mallocs - m0.Mallocs, GCs: m1.NumGC - m0.NumGC,
			GCPause: time.Duration(m1.PauseTotalNs - m0.PauseTotalNs), CPU: cpu, Wall: wall}
	}, nil
}

// clockOffset returns the relay's clock minus CLOCK_MONOTONIC: of 100
// readings of the relay's clock bracketed by two of CLOCK_MONOTONIC, the
// one with the narrowest bracket (a reading the scheduler interrupted
// would be off by the interruption).
func clockOffset(r *relay.Relay) time.Duration {
	var off, best time.Duration
	for i := range 100 {
		a := monotonic()
		rc := r.Now()
		b := monotonic()
		if i == 0 || b-a < best {
			best, off = b-a, time.Duration(rc)-(a+b)/2
		}
	}
	return off
}

// relayChild is the main function of a relay child process: it prints its
// listening address, relays until its input closes, then writes its
// relayRun as a JSON line followed by the departures (count, then one
// little-endian uint64 each).
func relayChild(cfg relay.Config) {
	procs := relay.TwoProcs()
	relay.QuietGC()
	addr, finish, err := startFullRelay(cfg, 1<<20)
	if err != nil {
		fatal(err)
	}
	fmt.Println(addr)
	io.Copy(io.Discard, os.Stdin)
	run := finish()
	run.Procs, run.CPUs = procs, runtime.NumCPU()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	b, _ := json.Marshal(run)
	w.Write(append(b, '\n'))
	binary.Write(w, binary.LittleEndian, uint64(len(run.Deps)))
	binary.Write(w, binary.LittleEndian, run.Deps)
	if err := w.Flush(); err != nil {
		fatal(err)
	}
}

// decodeRelayRun parses a relay child's output.
func decodeRelayRun(b []byte) (relayRun, error) {
	var run relayRun
	line, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return run, errors.New("relay output: no result line")
	}
	if err := json.Unmarshal(line, &run); err != nil {
		return run, fmt.Errorf("relay output: %v", err)
	}
	if len(rest) < 8 {
		return run, errors.New("relay output: no departures")
	}
	n := binary.LittleEndian.Uint64(rest)
	if n > uint64(len(rest)-8)/8 {
		return run, errors.New("relay output: departure count larger than the data")
	}
	run.Deps = make([]clock.Time, n)
	for i := range run.Deps {
		run.Deps[i] = clock.Time(binary.LittleEndian.Uint64(rest[8+8*i:]))
	}
	return run, nil
}

// Where the full emulation runs the relay.
const (
	modeInProc = "in"   // in the benchmark process
	modeProc   = "proc" // in a process of its own
)

// measureFull runs the relay with full emulation (rate, delay, queue) in
// this process (mode "in") or in a process of its own ("proc", pinned to
// relayCPUs if not nil), the GSO blaster offering offered bits/s and the
// GRO receiver each in a process of its own (as a sender, a relay and a
// receiver are on one host), and compares every delivered datagram's
// receive time with the instant the link model gave it (the hop's
// Departure event: its arrival at the far end): the emulation error as the
// receiver's host sees it (the kernel's receive timestamp: the relay's
// lateness and loopback), and as the receiving application sees it (its
// own wake-up and read latency added). The receiver stamps arrivals on
// CLOCK_MONOTONIC, which the relay's clock is mapped to.
// Departures and receptions are matched in order (the path does not
// reorder; checked with the sequence numbers).
func measureFull(mode string, relayCPUs []int, rate, offered float64, delay time.Duration, queue string, size int, dur, spin time.Duration, isPlain bool) (fullResult, error) {
	var res fullResult
	capacity := int(offered/8/float64(size)*(dur.Seconds()+1)) + 1024
	rcv, err := startChild("receive", "-size", fmt.Sprint(size))
	if err != nil {
		return res, err
	}
	defer rcv.kill()
	var relayAddr string
	var finish func() (relayRun, error)
	if mode == modeProc {
		rl, err := startChildOn(relayCPUs, "relay", "-target", rcv.addr, "-rate", fmt.Sprint(rate), "-delay", delay.String(),
			"-queue", queue, "-spin", spin.String(), fmt.Sprintf("-plain=%v", isPlain), fmt.Sprintf("-lock=%v", lockThread), fmt.Sprintf("-realtime=%v", realtime),
			"-poll", pollMode, "-coalesce", coalesceFlag.String())
		if err != nil {
			return res, err
		}
		defer rl.kill()
		relayAddr = rl.addr
		finish = func() (relayRun, error) {
			out, err := rl.result()
			if err != nil {
				return relayRun{}, fmt.Errorf("relay process: %v", err)
			}
			return decodeRelayRun(out)
		}
	} else {
		a, f, err := startFullRelay(fullConfig(rcv.addr, rate, delay, queue, spin, isPlain), capacity)
		if err != nil {
			return res, err
		}
		relayAddr, finish = a, func() (relayRun, error) { return f(), nil }
	}
	bl, err := startChild("blast", "-to", relayAddr, "-rate", fmt.Sprint(offered), "-size", fmt.Sprint(size), "-dur", dur.String())
	if err != nil {
		finish()
		return res, err
	}
	blOut, err := bl.result()
	if err != nil {
		finish()
		return res, fmt.Errorf("blaster: %v", err)
	}
	var blasted int64
	fmt.Sscan(string(blOut), &blasted)
	time.Sleep(delay + 200*time.Millisecond) // the last datagrams leave the link
	run, err := finish()
	if err != nil {
		return res, err
	}
	out, err := rcv.result()
	if err != nil {
		return res, fmt.Errorf("receiver: %v", err)
	}
	app, recv, seqs, stamped, err := decodeArrivals(out)
	if err != nil {
		return res, err
	}
	res.late, res.readLate, res.sleepLate = run.Late, run.ReadLate, run.SleepLate
	res.procs, res.cpus = run.Procs, run.CPUs
	res.mallocs, res.gcs, res.gcPause = run.Mallocs, run.GCs, run.GCPause
	res.cpu, res.wall = run.CPU, run.Wall
	res.stamped = stamped
	res.drops = run.Drops
	if run.ReadCalls > 0 {
		res.perRead = float64(run.Received) / float64(run.ReadCalls)
	}
	if run.WriteCalls > 0 {
		res.perWrite = float64(run.Sent) / float64(run.WriteCalls)
	}
	return res, res.match(run, blasted, size, app, recv, seqs)
}

// match matches each datagram the receiver got with its departure from
// the link and sets res's emulation error figures from the pairs.
func (res *fullResult) match(run relayRun, blasted int64, size int, app, recv []time.Duration, seqs []uint64) error {
	deps := run.Deps
	n := len(recv)
	if n < 100 {
		return fmt.Errorf("full emulation: %d datagrams received: too few", n)
	}
	for i := 1; i < n; i++ {
		if seqs[i] <= seqs[i-1] {
			return fmt.Errorf("full emulation: datagrams reordered (seq %d after %d)", seqs[i], seqs[i-1])
		}
	}
	// Match each received datagram with its departure from the link: by
	// number if the relay read every datagram the blaster sent (it numbers
	// them from 1 in the order it reads them, so datagram seq is its packet
	// seq+1), else in order if the receiver got every datagram the relay
	// wrote.
	res.lostBefore = blasted - run.Received
	res.lostAfter = run.Sent - int64(n)
	var order []clock.Time // departures in order, for the second case
	if res.lostBefore != 0 {
		if res.lostAfter != 0 {
			return fmt.Errorf("full emulation: %d datagrams lost before the relay and %d after it: cannot match receptions with departures", res.lostBefore, res.lostAfter)
		}
		for _, d := range deps {
			if d != 0 {
				order = append(order, d)
			}
		}
		if len(order) != n {
			return fmt.Errorf("full emulation: %d departures, %d received", len(order), n)
		}
	}
	errs := make([]time.Duration, 0, n)
	appErrs := make([]time.Duration, 0, n)
	for i := range n {
		var dep clock.Time
		if order != nil {
			dep = order[i]
		} else if id := seqs[i] + 1; id < uint64(len(deps)) {
			dep = deps[id]
		}
		if dep == 0 {
			return fmt.Errorf("full emulation: datagram %d received but never departed the link", seqs[i])
		}
		model := time.Duration(dep) - run.Offset
		errs = append(errs, recv[i]-model)
		appErrs = append(appErrs, app[i]-model)
	}
	// Delivered rate over the saturated middle half of the run.
	lo, hi := n/4, 3*n/4
	res.delivered = float64(hi-lo) * float64(size+run.Overhead) * 8 / (recv[hi] - recv[lo]).Seconds()
	res.matched = n
	slices.Sort(errs)
	res.errMin, res.errP50, res.errP99, res.errP999, res.errMax = errs[0], errs[n/2], errs[n*99/100], errs[n*999/1000], errs[n-1]
	slices.Sort(appErrs)
	res.appP50, res.appP99, res.appMax = appErrs[n/2], appErrs[n*99/100], appErrs[n-1]
	return nil
}

// runOffload prints section (d)'s forwarding rates.
func runOffload(size int, dur, spin time.Duration, rounds int) {
	fmt.Printf("\n(d) %d-byte datagrams from a GSO sender (runs of 32); relay and bare forwarder read with GRO and write with GSO, the receiver reads with GRO;\n", size)
	fmt.Printf("    \"relay, plain\" is the relay without GRO, GSO and write coalescing (as before them), for comparison\n")
	var bares, rels, plains []float64
	for i := 0; i < rounds; i++ {
		for fwd, out := range []*[]float64{&bares, &rels, &plains} {
			pps, err := measureForward(fwd, size, dur, spin, true)
			if err != nil {
				fatal(err)
			}
			*out = append(*out, pps)
		}
	}
	bare, rel, pl := median(bares), median(rels), median(plains)
	bits := func(pps float64) string { return units.FormatRate(pps * float64(size) * 8) }
	fmt.Printf("    bare GRO/GSO forwarder:        %10.0f packets/s = %s of payload  (median of %d: %s)\n", bare, bits(bare), rounds, list(bares))
	fmt.Printf("    relay (unlimited link):        %10.0f packets/s = %s of payload  (median of %d: %s)\n", rel, bits(rel), rounds, list(rels))
	fmt.Printf("    relay, plain (unlimited link): %10.0f packets/s = %s of payload  (median of %d: %s)\n", pl, bits(pl), rounds, list(plains))
	fmt.Printf("    ratio relay/bare:              %10.3f   relay/plain relay: %.3f\n", rel/bare, rel/pl)
}

// fullOpts are the settings of (d)'s full emulation.
type fullOpts struct {
	size           int
	rate, offeredX float64
	delay          time.Duration
	queue          string
	dur, spin      time.Duration
	rounds         int
	modes          []string // modeInProc, modeProc
	affinity       bool     // modeProc: the relay on the last CPU, the rest on the others
	plain          bool     // also the relay without offloads and coalescing
}

// runFull prints (d)'s full emulation: in each round, each mode, the relay
// and (with o.plain) the plain relay.
func runFull(o fullOpts) {
	fmt.Printf("    full emulation, %d-byte datagrams: rate %s, delay %v, queue %s, offered %.2fx the rate:\n", o.size, units.FormatRate(o.rate), o.delay, o.queue, o.offeredX)
	var relayCPUs, restCPUs, all []int
	if o.affinity && slices.Contains(o.modes, modeProc) {
		cpus, err := allowedCPUs()
		if err != nil || len(cpus) < 2 {
			fatal(fmt.Errorf("-affinity: need at least 2 CPUs (allowed %v, %v)", cpus, err))
		}
		all, relayCPUs, restCPUs = cpus, cpus[len(cpus)-1:], cpus[:len(cpus)-1]
		fmt.Printf("    affinity (mode proc): relay process on CPU %v, benchmark, blaster and receiver on CPUs %v\n", relayCPUs, restCPUs)
	}
	for i := 0; i < o.rounds; i++ {
		for _, mode := range o.modes {
			for _, isPlain := range []bool{false, true} {
				if isPlain && !o.plain {
					continue
				}
				var rcpus []int
				if mode == modeProc && relayCPUs != nil {
					if err := pinSelf(restCPUs); err != nil {
						fatal(err)
					}
					rcpus = relayCPUs
				}
				la, _ := os.ReadFile("/proc/loadavg")
				f, err := measureFull(mode, rcpus, o.rate, o.rate*o.offeredX, o.delay, o.queue, o.size, o.dur, o.spin, isPlain)
				if rcpus != nil {
					if err := pinSelf(all); err != nil {
						fatal(err)
					}
				}
				name := "relay"
				if isPlain {
					name = "relay, plain"
				}
				name += " (" + mode + ")"
				if rcpus != nil {
					name += ", pinned"
				}
				if err != nil {
					fmt.Printf("      %s: %v\n", name, err)
					continue
				}
				fmt.Printf("      %s, load %s: delivered %s; receive time - modelled arrival: median %v, p99 %v, p99.9 %v, min %v, max %v (n=%d, %s);\n",
					name, strings.Join(strings.Fields(string(la))[:1], ""), units.FormatRate(f.delivered), f.errP50, f.errP99, f.errP999, f.errMin, f.errMax, f.matched, stampKind(f.stamped))
				fmt.Printf("        at the receiving application: median %v, p99 %v, max %v\n", f.appP50, f.appP99, f.appMax)
				fmt.Printf("        link drops %d, lost before/after the relay %d/%d; %.1f datagrams per read, %.1f per write\n",
					f.drops, f.lostBefore, f.lostAfter, f.perRead, f.perWrite)
				fmt.Printf("        relay write lateness vs modelled instant: %s\n", f.late)
				fmt.Printf("        relay read lateness vs kernel receive at its socket: %s\n", f.readLate)
				fmt.Printf("        relay scheduler's sleeps, lateness vs the instant asked for: %s\n", f.sleepLate)
				if f.procs > 0 {
					fmt.Printf("        relay process: GOMAXPROCS %d, %d CPUs; while relaying %d heap allocations, %d GCs (pauses %v), CPU %.2f s in %.2f s (%.0f %% of a CPU)\n", f.procs, f.cpus, f.mallocs, f.gcs, f.gcPause, f.cpu.Seconds(), f.wall.Seconds(), 100*f.cpu.Seconds()/max(f.wall.Seconds(), 1e-9))
				} else {
					fmt.Printf("        benchmark process (relay, its event sink and the benchmark) while relaying: %d heap allocations, %d GCs (pauses %v), CPU %.2f s in %.2f s\n", f.mallocs, f.gcs, f.gcPause, f.cpu.Seconds(), f.wall.Seconds())
				}
			}
		}
	}
}

// stampKind names the receive times the error is measured with.
func stampKind(kernel bool) string {
	if kernel {
		return "kernel receive timestamps"
	}
	return "application receive times: no kernel timestamps"
}
