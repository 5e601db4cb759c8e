// Package archcheck enforces DESIGN §1's sans-I/O rule: the protocol,
// controller, link, queue and traffic packages never read the clock, sleep,
// arm timers, start goroutines or import package net. Only socket-driver
// subpackages (transport/udp) are exempt. The check runs as a test.
package archcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// CorePackages are the directories (relative to the module root) held to the rule.
var CorePackages = []string{"transport", "ccalgo", "link", "qdisc", "traffic"}

// Exempt lists directories below core packages that are drivers and may do I/O.
var Exempt = []string{"transport/udp"}

// forbiddenTime are the package time functions that read the clock or block.
var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "Tick": true,
	"NewTimer": true, "NewTicker": true, "Since": true, "Until": true,
}

// forbiddenImports may not be imported by core packages.
var forbiddenImports = map[string]bool{"net": true, "os/exec": true, "syscall": true, "golang.org/x/sys/unix": true}

// Violation is one breach of the rule.
type Violation struct {
	Pos  token.Position
	What string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s", v.Pos, v.What) }

// Check parses every non-test Go file of the core packages under root and
// returns the violations found.
func Check(root string) ([]Violation, error) {
	var out []Violation
	fset := token.NewFileSet()
	for _, pkg := range CorePackages {
		dir := filepath.Join(root, pkg)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if d == nil { // the package does not exist yet
					return filepath.SkipDir
				}
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				for _, ex := range Exempt {
					if rel == ex || strings.HasPrefix(rel, ex+"/") {
						return filepath.SkipDir
					}
				}
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			vs, err := checkFile(fset, path)
			out = append(out, vs...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkFile(fset *token.FileSet, path string) ([]Violation, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Violation
	timeName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if forbiddenImports[p] {
			out = append(out, Violation{fset.Position(imp.Pos()), "imports " + p})
		}
		if p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, Violation{fset.Position(n.Pos()), "starts a goroutine"})
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && forbiddenTime[n.Sel.Name] {
				out = append(out, Violation{fset.Position(n.Pos()), "uses time." + n.Sel.Name})
			}
		}
		return true
	})
	return out, nil
}
