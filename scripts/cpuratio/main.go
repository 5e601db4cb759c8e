// Command cpuratio times two shell commands side by side, alternated, as
// whole processes, and prints each one's CPU time (user + system, of the
// command and everything it waited for) and wall time as minimum, median and
// maximum, then the ratios of the medians A/B and the pair-by-pair CPU ratios.
// Alternating the two in one run is how docs/benchmark.md compares speeds on a
// shared machine: load that comes and goes reaches both sides alike.
//
//	go run ./scripts/cpuratio -n 5 -a 'cmd A ...' -b 'cmd B ...'
//
// Each command runs through `sh -c`; a command that exits non-zero stops the
// run with its output, so a broken comparison never prints a ratio.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"
)

// sample is one timed run of one command.
type sample struct {
	cpu  time.Duration // user + system time of the process tree
	wall time.Duration
}

func main() {
	n := flag.Int("n", 3, "pairs of runs (each pair runs A then B, the order alternating)")
	a := flag.String("a", "", "command A, run with sh -c (the numerator of the ratio)")
	b := flag.String("b", "", "command B, run with sh -c (the denominator)")
	flag.Parse()
	if err := run(os.Stdout, *n, *a, *b); err != nil {
		fmt.Fprintln(os.Stderr, "cpuratio:", err)
		os.Exit(2)
	}
}

func run(w io.Writer, n int, a, b string) error {
	as, bs, err := collect(n, a, b)
	if err != nil {
		return err
	}
	report(w, as, bs)
	return nil
}

// collect runs n pairs of a and b, alternating which goes first.
func collect(n int, a, b string) (as, bs []sample, err error) {
	if a == "" || b == "" {
		return nil, nil, errors.New("-a and -b are both required (two shell commands)")
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("-n %d: need at least 1 pair", n)
	}
	for i := 0; i < n; i++ {
		order := []string{a, b}
		if i%2 == 1 {
			order = []string{b, a}
		}
		for _, c := range order {
			s, err := timeCmd(c)
			if err != nil {
				return nil, nil, err
			}
			if c == a {
				as = append(as, s)
			} else {
				bs = append(bs, s)
			}
		}
	}
	return as, bs, nil
}

// timeCmd runs c through sh -c and returns its CPU and wall time.
func timeCmd(c string) (sample, error) {
	cmd := exec.Command("sh", "-c", c)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%q: %v\n%s", c, err, out.Bytes())
	}
	st := cmd.ProcessState
	return sample{cpu: st.UserTime() + st.SystemTime(), wall: wall}, nil
}

// report prints both commands' figures and the ratios A/B.
func report(w io.Writer, as, bs []sample) {
	cpuA, wallA := split(as)
	cpuB, wallB := split(bs)
	fmt.Fprintf(w, "A cpu  %s   wall %s\n", mmm(cpuA), mmm(wallA))
	fmt.Fprintf(w, "B cpu  %s   wall %s\n", mmm(cpuB), mmm(wallB))
	fmt.Fprintf(w, "A/B cpu %.3f   wall %.3f (medians)\n",
		ratio(median(cpuA), median(cpuB)), ratio(median(wallA), median(wallB)))
	fmt.Fprint(w, "A/B cpu pair by pair:")
	for i := range as {
		fmt.Fprintf(w, " %.3f", ratio(as[i].cpu, bs[i].cpu))
	}
	fmt.Fprintln(w)
}

func split(ss []sample) (cpu, wall []time.Duration) {
	for _, s := range ss {
		cpu = append(cpu, s.cpu)
		wall = append(wall, s.wall)
	}
	return cpu, wall
}

// mmm formats minimum, median and maximum in seconds.
func mmm(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("min %.3fs med %.3fs max %.3fs", s[0].Seconds(), median(d).Seconds(), s[len(s)-1].Seconds())
}

// median returns the middle value (the mean of the two middle ones for an
// even count).
func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
