package archcheck

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestCorePackagesAreSansIO(t *testing.T) {
	vs, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("sans-I/O rule (docs/architecture.md) broken: %v", v)
	}
}

// TestLayering: no package of the module imports a package of its own or a
// higher layer (docs/architecture.md, "Layers"), and every package has a layer.
func TestLayering(t *testing.T) {
	vs, err := CheckLayers("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("layering broken: %v", v)
	}
}

// TestLayersDocumented: docs/architecture.md lists every layer with its
// packages, in this order.
func TestLayersDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	last := -1
	for i, l := range Layers {
		row := "| " + strconv.Itoa(i+1) + " | " + l.Name + " |"
		at := strings.Index(doc, row)
		if at < 0 {
			t.Errorf("docs/architecture.md has no row %q", row)
			continue
		}
		if at < last {
			t.Errorf("docs/architecture.md lists layer %q out of order", l.Name)
		}
		last = at
		line := doc[at:]
		line = line[:strings.IndexByte(line, '\n')]
		for _, p := range l.Packages {
			if !strings.Contains(line, "`"+p+"`") {
				t.Errorf("docs/architecture.md: layer %q does not list `%s`", l.Name, p)
			}
		}
	}
}

// tree writes files (module-relative path → source) under a temporary root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, src := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func whats(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.What)
	}
	sort.Strings(out)
	return out
}

func TestCheckFindsViolations(t *testing.T) {
	root := tree(t, map[string]string{
		"qdisc/bad.go": "package qdisc\nimport (\n\"net\"\nt \"time\"\n\"os\"\n\"sync\"\nr \"math/rand/v2\"\n\"cclab/internal/disk\"\n)\n" +
			"var _ net.Addr\nvar _ sync.Mutex\nvar _ = os.Args\nvar _ = disk.X\n" +
			"func f() { go f(); t.Sleep(1); _ = t.Now(); _ = r.IntN(3); _ = r.New(r.NewPCG(1, 2)).IntN(3) }\n",
		"qdisc/ok_test.go":        "package qdisc\nimport \"time\"\nfunc g() { time.Sleep(1) }\n",
		"internal/disk/disk.go":   "package disk\nimport _ \"cclab/internal/deeper\"\nconst X = 1\n",
		"internal/deeper/deep.go": "package deeper\nimport \"os\"\nvar _ = os.Args\n",
		"internal/pure/pure.go":   "package pure\nconst Y = 2\n",
		"link/fine.go":            "package link\nimport _ \"cclab/internal/pure\"\n",
		"transport/udp/driver.go": "package udp\nimport \"net\"\nvar _ net.Addr\nfunc h() { go h() }\n",
		"ccalgo/fine.go":          "package ccalgo\nimport \"time\"\nconst D = time.Second\n",
		"sim/bad.go":              "package sim\nimport \"sync/atomic\"\nvar _ atomic.Int64\n",
	})
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"imports cclab/internal/disk, which does I/O (internal/disk → internal/deeper → os)",
		"imports net", "imports os", "imports sync", "imports sync/atomic",
		"starts a goroutine",
		"uses the global random source: r.IntN",
		"uses time.Now", "uses time.Sleep",
	}
	got := whats(vs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
	for _, v := range vs {
		if b := filepath.Base(v.Pos.Filename); b != "bad.go" {
			t.Errorf("violation %q reported in %s, want only the bad.go files", v.What, b)
		}
	}
}

func TestCheckLayersFindsViolations(t *testing.T) {
	root := tree(t, map[string]string{
		"clock/c.go":          "package clock\n",
		"qdisc/q.go":          "package qdisc\nimport _ \"cclab/transport\"\n", // up a layer
		"transport/t.go":      "package transport\nimport _ \"cclab/clock\"\n", // fine
		"sim/s.go":            "package sim\nimport _ \"cclab/relay\"\n",       // a driver importing another
		"relay/r.go":          "package relay\n",
		"backend/live/l.go":   "package liverun\nimport _ \"cclab/backend/sim\"\n", // a backend importing another
		"backend/sim/s.go":    "package simrun\nimport _ \"cclab/sim\"\n",          // fine
		"store/s.go":          "package store\nimport _ \"cclab/report\"\n",        // the store importing the report above it
		"report/r.go":         "package report\nimport _ \"cclab/store\"\n",        // fine
		"cmd/tool/main.go":    "package main\nimport _ \"cclab/backend/sim\"\n",    // fine
		"newthing/n.go":       "package newthing\n",                                // no layer
		"link/testdata/x.go":  "package x\nimport _ \"cclab/cmd/tool\"\n",          // testdata: skipped
		"link/l_test.go":      "package link\nimport _ \"cclab/eval\"\n",           // tests: not checked
		"link/ignore.go":      "//go:build ignore\n\npackage main\nimport _ \"cclab/eval\"\n",
		"experiments/e.go":    "package experiments\n",
		"internal/cli/cli.go": "package cli\nimport _ \"cclab/clock\"\n",
	})
	vs, err := CheckLayers(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"backend/live imports backend/sim of its own layer \"backends\"",
		"package newthing has no layer: add it to archcheck.Layers and docs/architecture.md",
		"qdisc (layer \"components\") imports transport of the higher layer \"path and protocol\"",
		"sim imports relay of its own layer \"drivers\"",
		"store (layer \"store\") imports report of the higher layer \"report\"",
	}
	if got := whats(vs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

func TestLayerOf(t *testing.T) {
	for dir, want := range map[string]string{
		"clock": "base", "eval": "harness", "backend/sim": "backends", "backend/ns3": "backends",
		"scenario": "scenario", "report/studies": "study reports",
		"cmd/cclab": "commands", "cmd/bottleneck/relaybench": "commands", "transport/udp": "drivers", "transport": "path and protocol",
	} {
		if i := LayerOf(dir); i < 0 || Layers[i].Name != want {
			t.Errorf("LayerOf(%q) = %d, want layer %q", dir, i, want)
		}
	}
	if i := LayerOf("nosuch"); i != -1 {
		t.Errorf("LayerOf(nosuch) = %d, want -1", i)
	}
}
