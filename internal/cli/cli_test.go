package cli

import (
	"flag"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantOK   bool
		wantOut  string // substring of the output, "" for none
	}{
		{nil, 0, true, ""},
		{[]string{"-n", "3"}, 0, true, ""},
		{[]string{"-h"}, 0, false, "usage: tool"},
		{[]string{"-n", "x"}, 2, false, `tool: invalid value "x" for flag -n: parse error (tool -h lists the flags)` + "\n"},
		{[]string{"-bogus"}, 2, false, "tool: flag provided but not defined: -bogus (tool -h lists the flags)\n"},
		{[]string{"-n", "3", "extra"}, 2, false, `tool: unexpected arguments ["extra"]`},
	} {
		var out strings.Builder
		fs := flag.NewFlagSet("tool", flag.ContinueOnError)
		fs.SetOutput(&out)
		fs.Int("n", 0, "a number")
		fs.Usage = func() { out.WriteString("usage: tool\n") }
		code, ok := Parse(fs, tc.args)
		if code != tc.wantCode || ok != tc.wantOK {
			t.Errorf("Parse(%q): got (%d, %v), want (%d, %v)", tc.args, code, ok, tc.wantCode, tc.wantOK)
		}
		if tc.wantOut == "" && out.Len() > 0 || !strings.Contains(out.String(), tc.wantOut) ||
			code == 2 && strings.Count(out.String(), "\n") != 1 {
			t.Errorf("Parse(%q): output got %q, want it to contain %q (one line on an error, usage only with -h)", tc.args, out.String(), tc.wantOut)
		}
	}
}

func TestRateValue(t *testing.T) {
	var bps float64
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Rate(&bps), "rate", "")
	if err := fs.Parse([]string{"-rate", "20Mbit"}); err != nil || bps != 20e6 {
		t.Errorf("-rate 20Mbit: got %v, %v; want 2e+07, nil", bps, err)
	}
	if got, want := fs.Lookup("rate").Value.String(), "20Mbit"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	if err := fs.Parse([]string{"-rate", "fast"}); err == nil {
		t.Errorf("-rate fast: got no error, want one")
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errs strings.Builder
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(&errs)
	AddVersion(fs, &out)
	code, ok := Parse(fs, []string{"-version"})
	if code != 0 || ok {
		t.Errorf("Parse(-version): got (%d, %v), want (0, false)", code, ok)
	}
	if got := out.String(); !strings.HasPrefix(got, "tool: ") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("-version output: got %q, want \"tool: ...\" with %s", got, runtime.Version())
	}
	out.Reset()
	fs2 := flag.NewFlagSet("tool", flag.ContinueOnError)
	AddVersion(fs2, &out)
	if code, ok := Parse(fs2, nil); code != 0 || !ok || out.Len() != 0 {
		t.Errorf("Parse without -version: got (%d, %v) and output %q, want (0, true) and none", code, ok, out.String())
	}
}

func TestUndocumented(t *testing.T) {
	usage := "usage: tool\n  -a\tflag a\n  -bee int\n    \tflag b\n  -c string\n  -bidir\n"
	doc := "| `-a` | x |\n| `-bee N` | y |\n| `--bidir` | z |\n"
	if got, want := Undocumented(usage, doc), []string{"-c"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Undocumented: got %v, want %v", got, want)
	}
}

// TestWithPort: the port replaces or completes addr's, IPv6 hosts stay
// bracketed once, and a port out of range is refused naming the flag.
func TestWithPort(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		port    int
		want    string
		wantErr string
	}{
		{addr: "127.0.0.1", port: 6000, want: "127.0.0.1:6000"},
		{addr: "127.0.0.1:5301", port: 6000, want: "127.0.0.1:6000"},
		{addr: ":5301", port: 6000, want: ":6000"},
		{addr: "[::1]", port: 6000, want: "[::1]:6000"},
		{addr: "[::1]:5301", port: 6000, want: "[::1]:6000"},
		{addr: "host", port: 0, wantErr: "-p 0: want a port, 1..65535"},
		{addr: "host", port: 70000, wantErr: "-p 70000: want a port, 1..65535"},
	} {
		got, err := WithPort("p", tc.addr, tc.port)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("WithPort(%q, %d) error = %v, want %q", tc.addr, tc.port, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("WithPort(%q, %d) = %q, %v; want %q", tc.addr, tc.port, got, err, tc.want)
		}
	}
}

// TestAlias: a flag given under an alias sets the same value, counts as
// set under its name, and Refuse names it as it was given.
func TestAlias(t *testing.T) {
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("P", 1, "flows")
	u := fs.Bool("udp", false, "datagram mode")
	Alias(fs, "P", "parallel")
	Alias(fs, "udp", "u")
	if err := fs.Parse([]string{"--parallel", "3", "-u"}); err != nil {
		t.Fatal(err)
	}
	if *n != 3 || !*u || !IsSet(fs, "P") || !IsSet(fs, "udp") || IsSet(fs, "parallel") {
		t.Errorf("got -P %d, -udp %v, IsSet(P) %v, IsSet(udp) %v, IsSet(parallel) %v; want 3, true, true, true, false",
			*n, *u, IsSet(fs, "P"), IsSet(fs, "udp"), IsSet(fs, "parallel"))
	}
	if err := Refuse(fs, "not in datagram mode", "P", "R"); err == nil || err.Error() != "-parallel: not in datagram mode" {
		t.Errorf("Refuse: got %v, want \"-parallel: not in datagram mode\"", err)
	}
	if err := Refuse(fs, "x", "R"); err != nil {
		t.Errorf("Refuse of a flag not given: got %v, want nil", err)
	}
}
