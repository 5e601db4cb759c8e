package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"cclab/internal/cli"
	"cclab/report"
)

func init() {
	register("plot", "plot one transfer's -J file (sender, receiver or iperf3): throughput, cwnd and RTT over time, as HTML", runPlot)
}

func runPlot(args []string) int {
	fs := flag.NewFlagSet("cclab plot", flag.ContinueOnError)
	out := fs.String("o", "", "HTML file to write; default: FILE with .html for .json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cclab plot [-o OUT.html] FILE.json\n\nflags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cli.ParseArgs(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "cclab plot: want one FILE.json (sender -J's output)")
		return 2
	}
	in := fs.Arg(0)
	dst := *out
	if dst == "" {
		dst = strings.TrimSuffix(in, filepath.Ext(in)) + ".html"
	}
	if err := plotFile(in, dst); err != nil {
		fmt.Fprintf(os.Stderr, "cclab plot: %s: %v\n", in, err)
		return 1
	}
	fmt.Println(dst)
	return 0
}

// plotFile writes the page of the -J file in to dst.
func plotFile(in, dst string) error {
	r, err := os.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if err := report.TransferPage(w, r, filepath.Base(in)); err != nil {
		w.Close()
		os.Remove(dst)
		return err
	}
	return errors.Join(w.Close())
}
