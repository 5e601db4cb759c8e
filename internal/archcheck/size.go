package archcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// Size limits of the project's style (docs/architecture.md, "Size"): no Go
// file longer than MaxFileLines and no function longer than MaxFuncLines,
// counted from the func keyword to the closing brace; generated files
// (ast.IsGenerated) are exempt.
const (
	MaxFileLines = 800
	MaxFuncLines = 120
)

// CheckSize returns every non-generated Go file under root (tests
// included; testdata and hidden directories skipped) longer than
// MaxFileLines and every function longer than MaxFuncLines, except in the
// module-relative, slash-separated directories for which skip is true.
// A violation's What names the file ("file: N lines") or the function
// ("func NAME: N lines"; methods as TYPE.NAME).
func CheckSize(root string, skip func(dir string) bool) ([]Violation, error) {
	var vs []Violation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || skip(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		if n := fset.File(f.Pos()).LineCount(); n > MaxFileLines {
			vs = append(vs, Violation{fset.Position(f.Pos()), fmt.Sprintf("file: %d lines (at most %d)", n, MaxFileLines)})
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > MaxFuncLines {
				vs = append(vs, Violation{start, fmt.Sprintf("func %s: %d lines (at most %d)", funcName(fd), n, MaxFuncLines)})
			}
		}
		return nil
	})
	return vs, err
}

// funcName is NAME, or TYPE.NAME for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
