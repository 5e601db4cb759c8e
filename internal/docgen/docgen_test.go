package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeT records what Check reports.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Logf(string, ...any)            {}
func (f *fakeT) Errorf(format string, a ...any) { f.errs = append(f.errs, format) }
func (f *fakeT) Fatalf(format string, a ...any) { f.errs = append(f.errs, format) }

const doc = "# Doc\n\ntext\n<!-- begin generated tab: go test -run X -->\n```\nold\n```\n<!-- end generated tab -->\nafter\n"

func TestCheck(t *testing.T) {
	if skipOtherArch(t) {
		t.Skip("docgen compares only on " + Arch)
	}
	t.Setenv(UpdateEnv, "") // this test sets it itself
	file := filepath.Join(t.TempDir(), "doc.md")
	os.WriteFile(file, []byte(doc), 0o644)
	f := &fakeT{TB: t}
	Check(f, file, "tab", "old")
	if len(f.errs) != 0 {
		t.Errorf("unchanged block: got errors %v", f.errs)
	}
	Check(f, file, "tab", "new\n")
	if len(f.errs) != 1 {
		t.Errorf("changed block: got %d errors, want 1", len(f.errs))
	}
	t.Setenv(UpdateEnv, "1")
	f = &fakeT{TB: t}
	Check(f, file, "tab", "new\n")
	b, _ := os.ReadFile(file)
	if want := strings.Replace(doc, "old", "new", 1); string(b) != want || len(f.errs) != 0 {
		t.Errorf("update: got %q (errors %v), want %q", b, f.errs, want)
	}
	Check(f, file, "missing", "x")
	if len(f.errs) != 1 {
		t.Errorf("missing block: got %d errors, want 1", len(f.errs))
	}
}

func TestCheckFile(t *testing.T) {
	if skipOtherArch(t) {
		t.Skip("docgen compares only on " + Arch)
	}
	t.Setenv(UpdateEnv, "")
	file := filepath.Join(t.TempDir(), "data")
	f := &fakeT{TB: t}
	CheckFile(f, file, "abc")
	if len(f.errs) != 1 {
		t.Errorf("absent file: got %d errors, want 1", len(f.errs))
	}
	t.Setenv(UpdateEnv, "1")
	f = &fakeT{TB: t}
	CheckFile(f, file, "abc")
	if b, _ := os.ReadFile(file); string(b) != "abc" || len(f.errs) != 0 {
		t.Errorf("update: got %q, errors %v", b, f.errs)
	}
	t.Setenv(UpdateEnv, "")
	CheckFile(f, file, "abc")
	if len(f.errs) != 0 {
		t.Errorf("up-to-date file: errors %v", f.errs)
	}
}
