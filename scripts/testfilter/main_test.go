package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stream is `go test -json` output of a package with a passing, a skipped
// and a failing test, and of a package that fails to build.
const stream = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"run","Package":"a","Test":"TestChrome"}
{"Action":"output","Package":"a","Test":"TestChrome","Output":"=== RUN   TestChrome\n"}
{"Action":"output","Package":"a","Test":"TestChrome","Output":"    b_test.go:30: chromium not installed (Debian: apt-get install chromium)\n"}
{"Action":"output","Package":"a","Test":"TestChrome","Output":"--- SKIP: TestChrome (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestChrome"}
{"Action":"run","Package":"a","Test":"TestBad"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"    a_test.go:9: got 1, want 2\n"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"a","Test":"TestBad"}
{"Action":"output","Package":"a","Output":"FAIL\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t0.01s\n"}
{"Action":"fail","Package":"a"}
{"ImportPath":"b","Action":"build-output","Output":"b/b.go:3:1: syntax error\n"}
{"ImportPath":"b","Action":"build-fail"}
{"Action":"output","Package":"c","Output":"PASS\n"}
{"Action":"output","Package":"c","Output":"ok  \tc\t0.02s\n"}
{"Action":"pass","Package":"c"}
`

func TestFilter(t *testing.T) {
	var out strings.Builder
	skips, failed, err := filter(strings.NewReader(stream), &out)
	if err != nil || !failed {
		t.Fatalf("filter: failed %v, err %v; want failed and no error", failed, err)
	}
	if len(skips) != 1 || skips[0].String() != "SKIP a TestChrome: b_test.go:30: chromium not installed (Debian: apt-get install chromium)" {
		t.Errorf("skips: got %v, want TestChrome with its reason", skips)
	}
	got := out.String()
	for _, want := range []string{"a_test.go:9: got 1, want 2", "--- FAIL: TestBad", "FAIL\ta\t0.01s", "b/b.go:3:1: syntax error", "ok  \tc\t0.02s"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"TestOK", "=== RUN", "PASS\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("output has %q (plain go test would not print it):\n%s", bad, got)
		}
	}
}

// TestFilterOnGoTest runs a real `go test -json` of a package with a
// skipped test through the command.
func TestFilterOnGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n\ngo 1.22\n")
	write("x_test.go", "package x\n\nimport \"testing\"\n\nfunc TestSkipped(t *testing.T) { t.Skip(\"needs a flux capacitor\") }\n\nfunc TestFine(t *testing.T) {}\n")
	gotest := exec.Command("go", "test", "-json", "./...")
	gotest.Dir = dir
	js, err := gotest.Output()
	if err != nil {
		t.Fatalf("go test: %v", err)
	}
	var out strings.Builder
	skips, failed, err := filter(strings.NewReader(string(js)), &out)
	if err != nil || failed || len(skips) != 1 || skips[0].Test != "TestSkipped" || !strings.Contains(skips[0].Reason, "needs a flux capacitor") {
		t.Errorf("filter of a real run: skips %v, failed %v, err %v; want TestSkipped with its reason", skips, failed, err)
	}
	if !strings.Contains(out.String(), "ok  \tx") {
		t.Errorf("output lacks the package result:\n%s", out.String())
	}
}
