// Package archcheck enforces the architecture's rules (docs/architecture.md)
// as tests:
//
//   - Sans-I/O core (Check): the protocol, controller, link, queue, traffic,
//     event, clock and simulator packages never read the clock, sleep, arm
//     timers, start goroutines, take locks, touch sockets, files or the
//     process (os), draw from the global math/rand source, or import a
//     package of this module that does I/O. Only socket-driver subpackages
//     (transport/udp) are exempt.
//   - Layers (CheckLayers): every package belongs to a layer and imports
//     only packages of lower layers, so no package imports one above it and
//     packages of one layer (the two backends, say) never import each other.
package archcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Module is the module path of the repository.
const Module = "cclab"

// CorePackages are the directories (relative to the module root) held to the
// sans-I/O rule.
var CorePackages = []string{"transport", "ccalgo", "link", "qdisc", "traffic", "sim", "event", "clock", "ippkt"}

// Exempt lists directories below core packages that are drivers and may do I/O.
var Exempt = []string{"transport/udp"}

// forbiddenTime are the package time functions that read the clock or block.
var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "Tick": true,
	"NewTimer": true, "NewTicker": true, "Since": true, "Until": true,
}

// ioImports are the standard (and x/) packages through which a package does
// I/O: sockets, files, processes, signals, system calls, logging to stderr.
var ioImports = map[string]bool{
	"net": true, "net/http": true, "os": true, "os/exec": true, "os/signal": true, "syscall": true,
	"golang.org/x/sys/unix": true, "io/ioutil": true, "database/sql": true, "log": true,
}

// forbiddenImports may not be imported by core packages: I/O, and locks
// (the core is driven by one goroutine; locking is the driver's business).
var forbiddenImports = func() map[string]bool {
	m := map[string]bool{"sync": true, "sync/atomic": true}
	for k := range ioImports {
		m[k] = true
	}
	return m
}()

// globalRand are the package-level functions of math/rand and math/rand/v2
// that draw from the global source (randomness must come from a seeded
// per-component *rand.Rand).
var globalRand = map[string]bool{
	"ExpFloat64": true, "Float32": true, "Float64": true, "Int": true, "Int32": true, "Int32N": true, "Int64": true,
	"Int64N": true, "IntN": true, "N": true, "NormFloat64": true, "Perm": true, "Shuffle": true, "Uint": true,
	"Uint32": true, "Uint32N": true, "Uint64": true, "Uint64N": true, "UintN": true, "Intn": true, "Int31": true,
	"Int31n": true, "Int63": true, "Int63n": true, "Seed": true, "Read": true,
}

// Violation is one breach of a rule.
type Violation struct {
	Pos  token.Position
	What string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s", v.Pos, v.What) }

// pkg is one package directory of the module: its non-test files' imports.
type pkg struct {
	dir     string               // relative to the module root, slash-separated
	imports map[string]token.Pos // import path → first position
}

// loadPackages parses the non-test Go files of every package directory
// under root (skipping testdata and hidden directories).
func loadPackages(root string, fset *token.FileSet) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{dir: rel, imports: map[string]token.Pos{}}
			pkgs[rel] = p
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := p.imports[ip]; !ok {
				p.imports[ip] = imp.Pos()
			}
		}
		return nil
	})
	return pkgs, err
}

// ignored reports whether a file is excluded from every build (//go:build ignore).
func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return true
			}
		}
	}
	return false
}

// sortedKeys returns a map's keys in order (deterministic reports).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// local returns the module-relative directory of an import path, or "".
func local(importPath string) string {
	if importPath == Module {
		return "."
	}
	if strings.HasPrefix(importPath, Module+"/") {
		return strings.TrimPrefix(importPath, Module+"/")
	}
	return ""
}

// doesIO returns the chain of module packages through which dir reaches an
// I/O import (e.g. ["internal/x", "os"]), or nil.
func doesIO(pkgs map[string]*pkg, dir string, seen map[string]bool) []string {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	p := pkgs[dir]
	if p == nil {
		return nil
	}
	for _, ip := range sortedKeys(p.imports) {
		if ioImports[ip] || strings.HasPrefix(ip, "golang.org/x/net") {
			return []string{ip}
		}
		if l := local(ip); l != "" {
			if chain := doesIO(pkgs, l, seen); chain != nil {
				return append([]string{l}, chain...)
			}
		}
	}
	return nil
}

func inCore(dir string) bool {
	for _, ex := range Exempt {
		if dir == ex || strings.HasPrefix(dir, ex+"/") {
			return false
		}
	}
	for _, c := range CorePackages {
		if dir == c || strings.HasPrefix(dir, c+"/") {
			return true
		}
	}
	return false
}

// Check parses every non-test Go file under root and returns the breaches
// of the sans-I/O rule by the core packages.
func Check(root string) ([]Violation, error) {
	fset := token.NewFileSet()
	pkgs, err := loadPackages(root, fset)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, d := range sortedKeys(pkgs) {
		if !inCore(d) {
			continue
		}
		p := pkgs[d]
		// Indirect I/O: a module package outside the core that does I/O.
		for _, ip := range sortedKeys(p.imports) {
			l := local(ip)
			if l == "" || inCore(l) {
				continue
			}
			if chain := doesIO(pkgs, l, map[string]bool{}); chain != nil {
				out = append(out, Violation{fset.Position(p.imports[ip]),
					fmt.Sprintf("imports %s, which does I/O (%s)", ip, strings.Join(append([]string{l}, chain...), " → "))})
			}
		}
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(d), "*.go"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			vs, err := checkFile(fset, f)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
	}
	return out, nil
}

func checkFile(fset *token.FileSet, path string) ([]Violation, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ignored(f) {
		return nil, nil
	}
	var out []Violation
	timeName, randNames := "", map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if forbiddenImports[p] {
			out = append(out, Violation{fset.Position(imp.Pos()), "imports " + p})
		}
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch p {
		case "time":
			timeName = "time"
			if name != "" {
				timeName = name
			}
		case "math/rand", "math/rand/v2":
			if name == "" {
				name = "rand"
			}
			randNames[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, Violation{fset.Position(n.Pos()), "starts a goroutine"})
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				break
			}
			if timeName != "" && id.Name == timeName && forbiddenTime[n.Sel.Name] {
				out = append(out, Violation{fset.Position(n.Pos()), "uses time." + n.Sel.Name})
			}
			if randNames[id.Name] && globalRand[n.Sel.Name] {
				out = append(out, Violation{fset.Position(n.Pos()), "uses the global random source: " + id.Name + "." + n.Sel.Name})
			}
		}
		return true
	})
	return out, nil
}

// Layer is one layer of the architecture: packages that import only
// packages of the layers before it.
type Layer struct {
	Name     string
	Packages []string // module-relative directories; "dir/..." matches dir and everything below it
}

// Layers is the architecture's layer order, lowest first
// (docs/architecture.md lists the same table; a test keeps them in step).
// A package may import only packages of lower layers: not one above it, and
// not another of its own layer.
var Layers = []Layer{
	{"base", []string{"clock", "ecn", "internal/mix", "internal/spec", "internal/units", "internal/archcheck", "internal/testenv", "internal/buildinfo", "internal/rusage", "internal/docgen", "experiments"}},
	{"vocabulary and edge", []string{"event", "netio", "internal/cli", "internal/testsvc", "internal/psk", "internal/hostlimit"}},
	{"components", []string{"qdisc", "ccalgo", "traffic", "internal/qlog"}},
	{"path and protocol", []string{"link", "transport", "ippkt"}},
	{"drivers", []string{"sim", "relay", "transport/udp"}},
	{"applications", []string{"perf", "tunshell"}},
	{"scenario", []string{"scenario"}},
	{"metrics", []string{"metrics"}},
	{"plan", []string{"plan", "internal/evaltest"}},
	{"backends", []string{"backend/...", "internal/netnstest", "agent"}},
	{"store", []string{"store"}},
	{"report", []string{"report"}},
	{"study reports", []string{"report/studies"}},
	{"harness", []string{"eval"}},
	{"campaigns", []string{"campaign", "internal/agenttest"}},
	{"tools", []string{"perf/perfcli"}},
	{"commands", []string{"cmd/...", "scripts/..."}},
}

// LayerOf returns the index in Layers of the layer of a module-relative
// package directory, or -1.
func LayerOf(dir string) int {
	best, bestLen := -1, -1
	for i, l := range Layers {
		for _, p := range l.Packages {
			n := len(p)
			match := dir == p
			if base, ok := strings.CutSuffix(p, "/..."); ok {
				match = dir == base || strings.HasPrefix(dir, base+"/")
				n = len(base)
			}
			if match && n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

// CheckLayers returns every import of a package of the module under root
// that is not of a lower layer, and every package without a layer.
func CheckLayers(root string) ([]Violation, error) {
	fset := token.NewFileSet()
	pkgs, err := loadPackages(root, fset)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, d := range sortedKeys(pkgs) {
		p := pkgs[d]
		li := LayerOf(d)
		if li < 0 {
			out = append(out, Violation{token.Position{Filename: d}, fmt.Sprintf("package %s has no layer: add it to archcheck.Layers and docs/architecture.md", d)})
			continue
		}
		for _, ip := range sortedKeys(p.imports) {
			l := local(ip)
			if l == "" {
				continue
			}
			lj := LayerOf(l)
			switch {
			case lj < 0:
				// reported as a package without a layer
			case lj > li:
				out = append(out, Violation{fset.Position(p.imports[ip]),
					fmt.Sprintf("%s (layer %q) imports %s of the higher layer %q", d, Layers[li].Name, l, Layers[lj].Name)})
			case lj == li:
				out = append(out, Violation{fset.Position(p.imports[ip]),
					fmt.Sprintf("%s imports %s of its own layer %q", d, l, Layers[li].Name)})
			}
		}
	}
	return out, nil
}
