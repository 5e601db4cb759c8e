// Package docgen keeps the documentation's generated outputs true. A test
// that produces a documented output (a table the simulator computes, a data
// file) passes it to Check or CheckFile: the test fails while the
// documentation differs, and scripts/gen-docs.sh (which sets
// CCLAB_UPDATE_DOCS=1) rewrites it. So a change of behaviour fails the tests
// until the documentation is regenerated and the change is reviewed in its
// diff.
//
// A generated block in a Markdown file is delimited by two comment lines:
//
//	<!-- begin generated NAME: how to regenerate -->
//	```
//	...
//	```
//	<!-- end generated NAME -->
package docgen

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// UpdateEnv is the environment variable that makes Check and CheckFile
// rewrite the documentation instead of failing.
const UpdateEnv = "CCLAB_UPDATE_DOCS"

// Arch is the architecture the documented outputs are generated on: other
// architectures may fuse multiply-adds (FMA) and round simulated numbers
// differently, so the checks skip there.
const Arch = "amd64"

func updating() bool { return os.Getenv(UpdateEnv) == "1" }

// skipOtherArch skips t off Arch, saying why.
func skipOtherArch(t testing.TB) bool {
	if runtime.GOARCH != Arch {
		t.Logf("documented outputs are generated on %s; %s may round differently (FMA), so they are not compared", Arch, runtime.GOARCH)
		return true
	}
	return false
}

// Check compares the generated block name of the Markdown file with text
// (shown in a code fence), or rewrites it under CCLAB_UPDATE_DOCS=1.
func Check(t testing.TB, file, name, text string) {
	t.Helper()
	if skipOtherArch(t) {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	check(t, file, name, "```\n"+text+"```\n")
}

// CheckMarkdown is Check for a block of Markdown (a table, a list): text
// goes into the document as it is, without a code fence. It does not
// depend on the architecture.
func CheckMarkdown(t testing.TB, file, name, text string) {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	check(t, file, name, text)
}

// check compares the block name of file with want, or rewrites it.
func check(t testing.TB, file, name, want string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("docgen: %v", err)
		return
	}
	doc := string(b)
	begin, end, err := block(doc, name)
	if err != nil {
		t.Fatalf("docgen: %s: %v", file, err)
		return
	}
	if doc[begin:end] == want {
		return
	}
	if updating() {
		if err := os.WriteFile(file, []byte(doc[:begin]+want+doc[end:]), 0o644); err != nil {
			t.Fatalf("docgen: %v", err)
		}
		t.Logf("docgen: rewrote %s block %s", file, name)
		return
	}
	t.Errorf("%s: generated block %q is out of date: the code now produces\n%s\nReview the change and run scripts/gen-docs.sh to update the documentation.", file, name, want)
}

// block returns the byte range of the generated block's contents.
func block(doc, name string) (begin, end int, err error) {
	open := "<!-- begin generated " + name + ":"
	i := strings.Index(doc, open)
	if i < 0 {
		return 0, 0, fmt.Errorf("no begin marker %q", open)
	}
	nl := strings.Index(doc[i:], "\n")
	if nl < 0 {
		return 0, 0, fmt.Errorf("block %s: no line after its begin marker", name)
	}
	begin = i + nl + 1
	closing := "<!-- end generated " + name + " -->"
	j := strings.Index(doc[begin:], closing)
	if j < 0 {
		return 0, 0, fmt.Errorf("block %s: no %q", name, closing)
	}
	return begin, begin + j, nil
}

// CheckFile compares a generated file with content, or writes it under
// CCLAB_UPDATE_DOCS=1.
func CheckFile(t testing.TB, file, content string) {
	t.Helper()
	if skipOtherArch(t) {
		return
	}
	b, err := os.ReadFile(file)
	if err == nil && string(b) == content {
		return
	}
	if updating() {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatalf("docgen: %v", err)
		}
		t.Logf("docgen: wrote %s", file)
		return
	}
	if err != nil {
		t.Fatalf("docgen: %v (run scripts/gen-docs.sh to generate it)", err)
		return
	}
	t.Errorf("%s is out of date: run scripts/gen-docs.sh to regenerate it", file)
}
