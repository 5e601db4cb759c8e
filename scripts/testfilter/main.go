// Command testfilter reads `go test -json` on stdin and prints what plain
// `go test` prints — package results, build errors and the output of failed
// tests — followed by every skipped test with the reason it gave, so that a
// skip is never silent in scripts/test.sh. It exits with status 1 if a test,
// a package or a build failed.
//
//	go test -json ./... | go run ./scripts/testfilter [-skips FILE]
//
// -skips appends the skip lines to FILE as well (test.sh lists them all at
// its end).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output, build-fail (Go 1.24+)
}

// skip is a skipped test and its reason.
type skip struct {
	Package, Test, Reason string
}

func (s skip) String() string {
	return fmt.Sprintf("SKIP %s %s: %s", s.Package, s.Test, s.Reason)
}

// filter copies the results of in to out and returns the skipped tests and
// whether anything failed.
func filter(in io.Reader, out io.Writer) (skips []skip, failed bool, err error) {
	type key struct{ pkg, test string }
	bufs := map[key][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // not JSON: pass it through
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				if e.Output != "PASS\n" { // plain go test omits it for passing packages
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			bufs[k] = append(bufs[k], e.Output)
		case "fail":
			failed = true
			if e.Test != "" {
				for _, o := range bufs[k] {
					if !strings.HasPrefix(o, "=== ") { // -v's markers: plain go test has none
						fmt.Fprint(out, o)
					}
				}
			}
			delete(bufs, k)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{e.Package, e.Test, reason(bufs[k])})
			}
			delete(bufs, k)
		case "pass":
			delete(bufs, k)
		}
	}
	sort.SliceStable(skips, func(i, j int) bool { return skips[i].Package < skips[j].Package })
	return skips, failed, sc.Err()
}

// reason extracts a skipped test's message from its output: the lines
// other than the === and --- markers, trimmed and joined.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " / ")
}

func main() {
	skipsFile := flag.String("skips", "", "also append the skip lines to this file")
	flag.Parse()
	skips, failed, err := filter(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testfilter:", err)
		os.Exit(2)
	}
	var f *os.File
	if *skipsFile != "" {
		if f, err = os.OpenFile(*skipsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testfilter:", err)
			os.Exit(2)
		}
		defer f.Close()
	}
	for _, s := range skips {
		fmt.Println(s)
		if f != nil {
			fmt.Fprintln(f, s)
		}
	}
	if failed {
		if f != nil {
			f.Close()
		}
		os.Exit(1)
	}
}
