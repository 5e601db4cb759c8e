// Package ns3 is cclab's ns-3 backend: it runs a plan (package plan) in the
// ns-3 network simulator, for the subset ns-3 models, so that cclab's own
// simulator can be checked against a reference (docs/ns3.md). One C++
// program, cxx/cclab-ns3.cc, is built on demand against the system's ns-3
// (Debian's libns3-dev, found through pkg-config) and cached by the hash of
// its source; Export writes the plan file it reads, and Run parses the
// per-flow and per-link series it prints. A plan feature ns-3 cannot
// express is an *Unsupported error, never an approximation.
package ns3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"cclab/plan"
)

//go:embed cxx/cclab-ns3.cc
var source []byte

// Packages are the pkg-config names of the ns-3 modules the program uses.
var Packages = []string{"ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-traffic-control"}

// ErrMissing is wrapped by the error Build returns when ns-3 or a compiler
// is not installed.
var ErrMissing = errors.New("ns-3 is not installed: install Debian's ns3 and libns3-dev (pkg-config package ns3-core) and g++")

var buildMu sync.Mutex

// Build compiles cclab-ns3 against the system's ns-3 unless a binary of the
// same source, ns-3 version and compiler flags is cached, and returns its
// path. The cache is $XDG_CACHE_HOME/cclab/ns3 (os.UserCacheDir).
func Build(ctx context.Context) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		return "", fmt.Errorf("%w (%s: %v)", ErrMissing, cxx, err)
	}
	if _, err := exec.LookPath("pkg-config"); err != nil {
		return "", fmt.Errorf("%w (pkg-config: %v)", ErrMissing, err)
	}
	ver, err := exec.CommandContext(ctx, "pkg-config", "--modversion", "ns3-core").Output()
	if err != nil {
		return "", fmt.Errorf("%w (pkg-config --modversion ns3-core: %v)", ErrMissing, err)
	}
	out, err := exec.CommandContext(ctx, "pkg-config", append([]string{"--libs"}, Packages...)...).Output()
	if err != nil {
		return "", fmt.Errorf("%w (pkg-config --libs %s: %v)", ErrMissing, strings.Join(Packages, " "), err)
	}
	// Only the -l flags: Debian's .pc files also name the dev symlinks of
	// libraries ns-3 itself links (libgsl.so), absent without their -dev
	// packages; the headers are under /usr/include/ns3.
	var libs []string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") {
			libs = append(libs, f)
		}
	}
	args := append([]string{"-O2", "-std=c++17", "-w", "-x", "c++", "-"}, libs...)
	h := sha256.New()
	h.Write(source)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s", ver, cxx, strings.Join(args, " "))
	key := hex.EncodeToString(h.Sum(nil))[:16]
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "cclab", "ns3", key)
	bin := filepath.Join(dir, "cclab-ns3")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, cxx, append([]string{"-o", tmp}, args...)...)
	cmd.Stdin = bytes.NewReader(source)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ns3: building cclab-ns3 (%s): %v\n%s", cxx, err, stderr.String())
	}
	return bin, os.Rename(tmp, bin)
}

// FlowSample is one flow's state at one sampling instant (cumulative
// counters since the start of the run).
type FlowSample struct {
	T           time.Duration // since the start of the run
	Delivered   int64         // bytes the receiving application has read
	Cwnd        int           // congestion window, bytes
	Ssthresh    int           // slow-start threshold, bytes
	SRTT        time.Duration // smoothed RTT (RFC 6298 over ns-3's RTT samples)
	Retransmits int64         // data segments sent again
	Recoveries  int64         // entries into fast recovery (CA_RECOVERY)
	RTOs        int64         // retransmission timeouts (every expiry of the timer for data: m_rto doubled)
	Sent        int64         // data segments sent
}

// LinkSample is one hop direction's state at one sampling instant.
type LinkSample struct {
	T          time.Duration
	QueueLen   int   // packets waiting (queue disc and device queue)
	QueueDrops int64 // packets the queue dropped
	LossDrops  int64 // packets the loss stage dropped
	TxPackets  int64 // packets sent onto the link
	TxBytes    int64 // their bytes (with the 2-byte PPP header)
}

// Result is a run's series, keyed by the plan's flow and link IDs.
type Result struct {
	Flows map[uint64][]FlowSample
	Links map[int32][]LinkSample
	CPU   time.Duration // user+system CPU time of the ns-3 process
}

// Run exports p, runs it in ns-3 and returns the series.
func Run(ctx context.Context, p *plan.Plan) (*Result, error) {
	pf, err := Export(p)
	if err != nil {
		return nil, err
	}
	bin, err := Build(ctx)
	if err != nil {
		return nil, err
	}
	return RunFile(ctx, bin, pf)
}

// RunFile runs the built program bin on an exported plan file's contents.
func RunFile(ctx context.Context, bin string, planFile []byte) (*Result, error) {
	f, err := os.CreateTemp("", "cclab-ns3-*.plan")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(planFile); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, f.Name())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ns3: cclab-ns3: %v\n%s", err, stderr.String())
	}
	res, err := Parse(&stdout)
	if err != nil {
		return nil, err
	}
	res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, nil
}

// Parse reads cclab-ns3's output lines (format in cxx/cclab-ns3.cc).
func Parse(r io.Reader) (*Result, error) {
	res := &Result{Flows: map[uint64][]FlowSample{}, Links: map[int32][]LinkSample{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		var v []float64
		for _, s := range fs[1:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("ns3 output line %d: %q: %v", n, s, err)
			}
			v = append(v, x)
		}
		t := time.Duration(v[0] * 1e9)
		switch {
		case fs[0] == "F" && len(v) == 10:
			res.Flows[uint64(v[1])] = append(res.Flows[uint64(v[1])], FlowSample{T: t, Delivered: int64(v[2]),
				Cwnd: int(v[3]), Ssthresh: int(v[4]), SRTT: time.Duration(v[5] * 1e9), Retransmits: int64(v[6]),
				Recoveries: int64(v[7]), RTOs: int64(v[8]), Sent: int64(v[9])})
		case fs[0] == "L" && len(v) == 7:
			res.Links[int32(v[1])] = append(res.Links[int32(v[1])], LinkSample{T: t, QueueLen: int(v[2]),
				QueueDrops: int64(v[3]), LossDrops: int64(v[4]), TxPackets: int64(v[5]), TxBytes: int64(v[6])})
		default:
			return nil, fmt.Errorf("ns3 output line %d: unknown record %q with %d fields", n, fs[0], len(v))
		}
	}
	return res, sc.Err()
}

// At returns the last sample at or before t (the first sample if none).
func At[S any](s []S, t time.Duration, when func(S) time.Duration) (S, bool) {
	var zero S
	if len(s) == 0 {
		return zero, false
	}
	best := s[0]
	for _, x := range s {
		if when(x) > t {
			break
		}
		best = x
	}
	return best, true
}

// Goodput returns the flow's goodput between two instants, bits/s, from
// its delivered bytes.
func (r *Result) Goodput(flow uint64, from, to time.Duration) float64 {
	s := r.Flows[flow]
	a, ok1 := At(s, from, func(x FlowSample) time.Duration { return x.T })
	b, ok2 := At(s, to, func(x FlowSample) time.Duration { return x.T })
	if !ok1 || !ok2 || b.T <= a.T {
		return 0
	}
	d := a.Delivered
	if from <= 0 {
		d = 0
		a.T = 0
	}
	return float64(b.Delivered-d) * 8 / (b.T - a.T).Seconds()
}
