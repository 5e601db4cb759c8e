package archcheck

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCorePackagesAreSansIO(t *testing.T) {
	vs, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("DESIGN §1 violation: %v", v)
	}
}

func TestCheckFindsViolations(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("qdisc/bad.go", "package qdisc\nimport (\n\"net\"\nt \"time\"\n)\nvar _ net.Addr\nfunc f() { go f(); t.Sleep(1); _ = t.Now() }\n")
	write("qdisc/ok_test.go", "package qdisc\nimport \"time\"\nfunc g() { time.Sleep(1) }\n")
	write("transport/udp/driver.go", "package udp\nimport \"net\"\nvar _ net.Addr\nfunc h() { go h() }\n")
	write("ccalgo/fine.go", "package ccalgo\nimport \"time\"\nconst D = time.Second\n")
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"imports net": true, "starts a goroutine": true, "uses time.Sleep": true, "uses time.Now": true}
	got := map[string]bool{}
	for _, v := range vs {
		got[v.What] = true
		if filepath.Base(v.Pos.Filename) != "bad.go" {
			t.Errorf("violation reported in %s, want only bad.go", v.Pos.Filename)
		}
	}
	for w := range want {
		if !got[w] {
			t.Errorf("missing violation %q; got %v", w, vs)
		}
	}
	if len(vs) != len(want) {
		t.Errorf("got %d violations, want %d: %v", len(vs), len(want), vs)
	}
}
