// Command ccbench compares cclab's goodput with quic-go's on the same machine
// in one run: it transfers -n bytes over loopback with cclab (cmd/receiver
// and cmd/sender logic in-process, over real UDP sockets) and over one
// github.com/quic-go/quic-go stream (self-signed certificate generated
// in-process), alternating the two -runs times, and prints each goodput, the
// medians and their ratio. With -cpuprofile it records a CPU profile of the
// cclab transfers and prints its top functions (via go tool pprof). See
// docs/benchmark.md.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"cclab/internal/cli"
	"cclab/internal/rusage"
	"cclab/internal/units"
	"cclab/perf"
	"cclab/transport"
	"cclab/transport/udp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// variant is one cclab configuration measured against quic-go.
type variant struct {
	name    string
	driver  udp.Config
	srv     *perf.Server
	keys    *perf.Keys // -psk: the twin that authenticates its flows (both ends hold keys)
	encrypt bool       // -psk-encrypt: the twin encrypts too
	base    *variant   // -psk: the unauthenticated variant this one is the twin of
	bps     []float64
	cpu     []float64 // process CPU seconds per GiB of each transfer
}

// options are ccbench's flags.
type options struct {
	n           int64
	runs        int
	cc          string
	recovery    string
	size        int
	prof        string
	profVariant string // -cpuprofile-variant: the variant whose first transfer is profiled ("": the first)
	quicProf    string
	top         int
	only        string
	vs          string // the yardstick: "quic" (quic-go) or "kernel" (kernel TCP through iperf3)
}

// yardstick names the stack cclab is compared with in the output.
func (o options) yardstick() string {
	if o.vs == "kernel" {
		return "kernel-tcp"
	}
	return "quic-go"
}

func run(args []string, stdout, stderr io.Writer) int {
	o, variants, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ctx := context.Background()
	fmt.Fprintf(stdout, "ccbench: %s per transfer over loopback, %d runs each, GOMAXPROCS=%d, %s\n",
		units.FormatBytes(o.n), o.runs, runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Fprintf(stdout, "cclab: cc=%s recovery=%s; cclab-stretch: the same with stretch ACKs (Transmit once per received batch)\n\n", o.cc, o.recovery)

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, v := range variants {
		srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0", Driver: v.driver, Keys: v.keys})
		if err != nil {
			fmt.Fprintf(stderr, "ccbench: %v\n", err)
			return 1
		}
		defer srv.Close()
		go srv.Serve(sctx)
		v.srv = srv
	}

	var cclabProf, quicProfile *profiler
	if o.prof != "" {
		cclabProf = &profiler{path: o.prof}
	}
	if o.quicProf != "" {
		quicProfile = &profiler{path: o.quicProf}
	}
	qg, qcpu, err := runRounds(ctx, o, variants, cclabProf, quicProfile, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "ccbench: %v\n", err)
		return 1
	}
	writeMedians(stdout, variants, qg, o.yardstick())
	writeDistribution(stdout, variants, qg, qcpu, o.yardstick())
	writeAuthRatios(stdout, variants)
	for _, p := range []*profiler{cclabProf, quicProfile} {
		if p == nil {
			continue
		}
		if err := p.finish(); err != nil {
			fmt.Fprintf(stderr, "ccbench: profile: %v\n", err)
			return 1
		}
	}
	if cclabProf != nil {
		printTop(stdout, cclabProf.path, o.top)
	}
	return 0
}

// parseFlags reads ccbench's flags and the cclab variants -acks asks for
// (none with -only quic); ok is false when run should return code.
func parseFlags(args []string, stdout, stderr io.Writer) (o options, variants []*variant, code int, ok bool) {
	fs := flag.NewFlagSet("ccbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nStr := fs.String("n", "256MiB", "bytes per transfer (units: 100M, 1G, 256MiB)")
	fs.IntVar(&o.runs, "runs", 3, "transfers per stack (alternating the stacks)")
	fs.StringVar(&o.cc, "cc", transport.DefaultCC, "cclab congestion controller spec")
	fs.StringVar(&o.recovery, "recovery", transport.DefaultRecovery, "cclab loss-recovery strategy")
	fs.IntVar(&o.size, "size", 0, "cclab max datagram, bytes (default: discovered from 1200 up to the route's MTU, RFC 8899; quic-go uses its own PMTU logic)")
	acks := fs.String("acks", "both", "cclab ACK mode: rule (Transmit after every datagram: ACK every 2nd segment, the driver's default), stretch (Transmit once per received batch, as behind GRO), or both")
	fs.StringVar(&o.prof, "cpuprofile", "", "write a CPU profile of the first cclab transfer to this file and print its top functions")
	fs.StringVar(&o.profVariant, "cpuprofile-variant", "", "with -cpuprofile: profile the first transfer of this variant (as the run lines name it, e.g. cclab-psk) instead of the first one")
	fs.StringVar(&o.quicProf, "quic-cpuprofile", "", "write a CPU profile of the first quic-go transfer to this file")
	fs.IntVar(&o.top, "top", 25, "functions to print from the profile")
	fs.StringVar(&o.only, "only", "", "run only one stack: cclab or quic (the yardstick -vs names)")
	fs.StringVar(&o.vs, "vs", "quic", "the yardstick: quic (quic-go in this process) or kernel (kernel TCP on loopback: iperf3 -s -1 and iperf3 -c, one stream, their CPU from their rusage)")
	encrypt := fs.Bool("psk-encrypt", false, "with -psk: the twins encrypt their packets too (AES-128-GCM), not only authenticate them (AES-128-GMAC)")
	psk := fs.Bool("psk", false, "also run each cclab variant authenticated (a fresh pre-shared key at both ends: AES-128-GCM on every packet), as the variant's -psk twin in the same rounds, and print the authenticated/unauthenticated ratios")
	cli.AddVersion(fs, stdout)
	if code, ok := cli.Parse(fs, args); !ok {
		return o, nil, code, false
	}
	n, err := units.ParseBytes(*nStr)
	if err != nil || n <= 0 {
		fmt.Fprintf(stderr, "ccbench: -n %q: %v\n", *nStr, err)
		return o, nil, 2, false
	}
	o.n = n
	if o.only != "" && o.only != "cclab" && o.only != "quic" {
		fmt.Fprintf(stderr, "ccbench: -only %q: want cclab or quic\n", o.only)
		return o, nil, 2, false
	}
	if o.vs != "quic" && o.vs != "kernel" {
		fmt.Fprintf(stderr, "ccbench: -vs %q: want quic or kernel\n", o.vs)
		return o, nil, 2, false
	}
	switch *acks {
	case "rule":
		variants = []*variant{{name: "cclab"}}
	case "stretch":
		variants = []*variant{{name: "cclab-stretch", driver: udp.Config{TransmitPerBatch: true}}}
	case "both":
		variants = []*variant{{name: "cclab"}, {name: "cclab-stretch", driver: udp.Config{TransmitPerBatch: true}}}
	default:
		fmt.Fprintf(stderr, "ccbench: -acks %q: want rule, stretch or both\n", *acks)
		return o, nil, 2, false
	}
	if o.only == "quic" {
		variants = nil
	}
	if *psk && len(variants) > 0 {
		keys, err := freshKey()
		if err != nil {
			fmt.Fprintf(stderr, "ccbench: %v\n", err)
			return o, nil, 1, false
		}
		for _, v := range variants[:len(variants):len(variants)] {
			variants = append(variants, &variant{name: v.name + "-psk", driver: v.driver, keys: keys, encrypt: *encrypt, base: v})
		}
	}
	if o.profVariant != "" {
		var names []string
		for _, v := range variants {
			names = append(names, v.name)
		}
		if !slices.Contains(names, o.profVariant) {
			fmt.Fprintf(stderr, "ccbench: -cpuprofile-variant %q: want one of the variants run: %s\n", o.profVariant, strings.Join(names, ", "))
			return o, nil, 2, false
		}
	}
	return o, variants, 0, true
}

// runRounds runs o.runs rounds, each a transfer per cclab variant and one
// over the yardstick (unless -only cclab), printing each; it returns the yardstick's
// goodputs and CPU seconds per GiB.
func runRounds(ctx context.Context, o options, variants []*variant, cclabProf, quicProfile *profiler, stdout io.Writer) (qg, qcpu []float64, err error) {
	for i := 0; i < o.runs; i++ {
		for _, v := range variants {
			if o.profVariant == "" || o.profVariant == v.name {
				cclabProf.resume()
			}
			cpu := startCPU()
			res, err := perf.Run(ctx, perf.ClientConfig{Addr: v.srv.Addr().String(), Bytes: o.n, CC: o.cc,
				Recovery: o.recovery, Size: o.size, Driver: v.driver, Keys: v.keys, Encrypt: v.encrypt})
			c := cpu.perGiB(o.n)
			cclabProf.pause()
			if err != nil {
				return nil, nil, fmt.Errorf("%s run %d: %v", v.name, i+1, err)
			}
			e := res.End
			v.bps = append(v.bps, e.ThroughputBps)
			v.cpu = append(v.cpu, c)
			fmt.Fprintf(stdout, "run %d %-13s: %8.1f Mbit/s  %.3f s  cpu=%.2fs/GiB  retransmits=%d rtos=%d min_rtt=%.3fms mean_srtt=%.3fms verified=%v (%s)\n",
				i+1, v.name, e.ThroughputBps/1e6, e.Seconds, c, e.Retransmits, e.RTOs, e.MinRTTms, e.MeanSRTTms, e.Verified, e.Verification)
		}
		if o.only != "cclab" {
			var qr quicResult
			var c float64
			if o.vs == "kernel" {
				qr, c, err = runKernel(ctx, o.n)
			} else {
				quicProfile.resume()
				cpu := startCPU()
				qr, err = runQUIC(ctx, o.n)
				c = cpu.perGiB(o.n)
				quicProfile.pause()
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s run %d: %v", o.yardstick(), i+1, err)
			}
			bps := float64(qr.Bytes) * 8 / qr.Elapsed.Seconds()
			qg = append(qg, bps)
			qcpu = append(qcpu, c)
			fmt.Fprintf(stdout, "run %d %-13s: %8.1f Mbit/s  %.3f s  cpu=%.2fs/GiB\n", i+1, o.yardstick(), bps/1e6, qr.Elapsed.Seconds(), c)
		}
	}
	return qg, qcpu, nil
}

// writeMedians prints each stack's median goodput and each cclab variant's
// ratio to quic-go's.
func writeMedians(w io.Writer, variants []*variant, qg []float64, yard string) {
	mq := median(qg)
	fmt.Fprintln(w)
	for _, v := range variants {
		mc := median(v.bps)
		fmt.Fprintf(w, "median goodput %-13s: %8.1f Mbit/s", v.name, mc/1e6)
		if mq > 0 && mc > 0 {
			fmt.Fprintf(w, "   ratio %s/%s = %.2f", v.name, yard, mc/mq)
		}
		fmt.Fprintln(w)
	}
	if mq > 0 {
		fmt.Fprintf(w, "median goodput %-13s: %8.1f Mbit/s\n", yard, mq/1e6)
	}
}

// writeDistribution prints, per cclab variant, the run-by-run goodput
// ratios to the quic-go transfer of the same round (their spread shows how
// much of a median ratio is the load of the moment) and the median CPU time
// per GiB of each stack (both ends of a transfer run in this process; for
// cclab it includes the verification digests at both ends).
func writeDistribution(w io.Writer, variants []*variant, qg, qcpu []float64, yard string) {
	for _, v := range variants {
		if len(qg) == len(v.bps) && len(qg) > 1 {
			r := make([]float64, len(qg))
			for i := range r {
				r[i] = v.bps[i] / qg[i]
			}
			fmt.Fprintf(w, "run-by-run ratio %s/%s: min %.2f median %.2f max %.2f\n", v.name, yard, slices.Min(r), median(r), slices.Max(r))
		}
	}
	if median(qcpu) <= 0 && (len(variants) == 0 || median(variants[0].cpu) <= 0) {
		return // CPU time unknown on this platform
	}
	for _, v := range variants {
		mc := median(v.cpu)
		fmt.Fprintf(w, "median CPU per GiB %-13s: %5.2f s", v.name, mc)
		if mq := median(qcpu); mq > 0 && mc > 0 {
			fmt.Fprintf(w, "   ratio %s/%s = %.2f   ratio %s/%s = %.2f", yard, v.name, mq/mc, v.name, yard, mc/mq)
		}
		fmt.Fprintln(w)
	}
	if len(qcpu) > 0 {
		fmt.Fprintf(w, "median CPU per GiB %-13s: %5.2f s\n", yard, median(qcpu))
	}
}

// freshKey returns a key file of one random 32-byte key (-psk).
func freshKey() (*perf.Keys, error) {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	return perf.ParseKeys([]byte(hex.EncodeToString(k[:])))
}

// writeAuthRatios prints, per authenticated twin (-psk), its median
// goodput and CPU per GiB against its unauthenticated variant's, and the
// run-by-run goodput ratios (each round ran both, one after the other).
func writeAuthRatios(w io.Writer, variants []*variant) {
	for _, v := range variants {
		b := v.base
		if b == nil || median(b.bps) <= 0 {
			continue
		}
		fmt.Fprintf(w, "authenticated/unauthenticated %s/%s: goodput ratio %.2f (median %.1f / %.1f Mbit/s)", v.name, b.name,
			median(v.bps)/median(b.bps), median(v.bps)/1e6, median(b.bps)/1e6)
		if len(v.bps) == len(b.bps) && len(v.bps) > 1 {
			r := make([]float64, len(v.bps))
			for i := range r {
				r[i] = v.bps[i] / b.bps[i]
			}
			fmt.Fprintf(w, ", run by run min %.2f max %.2f", slices.Min(r), slices.Max(r))
		}
		if mc, mb := median(v.cpu), median(b.cpu); mc > 0 && mb > 0 {
			fmt.Fprintf(w, "; CPU per GiB %.2f / %.2f s (ratio %.2f)", mc, mb, mc/mb)
		}
		fmt.Fprintln(w)
	}
}

// cpuMark is the process CPU time at the start of a transfer.
type cpuMark struct {
	t  time.Duration
	ok bool
}

func startCPU() cpuMark {
	t, ok := rusage.CPU()
	return cpuMark{t, ok}
}

// perGiB returns the process CPU seconds since the mark per GiB of n bytes
// (0 if unknown).
func (m cpuMark) perGiB(n int64) float64 {
	t, ok := rusage.CPU()
	if !m.ok || !ok || n <= 0 {
		return 0
	}
	return (t - m.t).Seconds() / (float64(n) / (1 << 30))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// profiler records one CPU profile over several paused/resumed spans. The
// runtime allows one CPU profile at a time, so the spans are recorded into
// one buffer per span and concatenated samples are not possible; instead
// only the first span is profiled (enough for "where does the time go").
type profiler struct {
	path string
	buf  bytes.Buffer
	on   bool
	done bool
}

func (p *profiler) resume() {
	if p == nil || p.done || p.on {
		return
	}
	if err := pprof.StartCPUProfile(&p.buf); err == nil {
		p.on = true
	}
}

func (p *profiler) pause() {
	if p == nil || !p.on {
		return
	}
	pprof.StopCPUProfile()
	p.on, p.done = false, true
}

func (p *profiler) finish() error {
	if p == nil {
		return nil
	}
	p.pause()
	return os.WriteFile(p.path, p.buf.Bytes(), 0o644)
}

// printTop prints the profile's top functions with go tool pprof, or says
// how to do it when the go command is not available.
func printTop(w io.Writer, path string, n int) {
	abs, _ := filepath.Abs(path)
	fmt.Fprintf(w, "\nCPU profile of the first cclab transfer (sender and receiver in one process): %s\n", abs)
	cmd := exec.Command("go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", n), abs)
	cmd.Stderr = io.Discard
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(w, "(could not run go tool pprof: %v)\ninspect with: go tool pprof -top %s\n", err, abs)
		return
	}
	w.Write(out)
	fmt.Fprintf(w, "cumulative view: go tool pprof -top -cum %s\n", abs)
}
