package ccalgo

import (
	"fmt"
	"strings"
	"testing"

	"cclab/experiments"
	"cclab/internal/docgen"
)

// controllerList is the one-paragraph list of every registered controller
// that README.md and docs/index.md carry.
func controllerList() string {
	var stream, dgram []string
	for _, n := range Registry.Names() {
		stream = append(stream, "`"+n+"`")
	}
	for _, n := range DgramRegistry.Names() {
		dgram = append(dgram, "`"+n+"`")
	}
	return fmt.Sprintf("Congestion controllers in this build: %s (stream mode); %s (datagram mode). Each with its parameters, defaults and sources: [controllers](%s) and [dccp](%s).",
		strings.Join(stream, ", "), strings.Join(dgram, ", "), "docs/controllers.md", "docs/dccp.md")
}

// controllerTable is docs/controllers.md's table of every registered
// controller with its registry description.
func controllerTable() string {
	var b strings.Builder
	b.WriteString("| name | mode | what it is |\n| --- | --- | --- |\n")
	for _, r := range []struct {
		mode string
		reg  interface {
			Names() []string
		}
		doc func(string) string
	}{
		{"stream", Registry, func(n string) string { e, _ := Registry.Lookup(n); return e.Doc }},
		{"datagram", DgramRegistry, func(n string) string { e, _ := DgramRegistry.Lookup(n); return e.Doc }},
	} {
		for _, n := range r.reg.Names() {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n, r.mode, r.doc(n))
		}
	}
	return b.String()
}

// TestControllerListsDocumented: README.md, docs/index.md and
// docs/controllers.md list every registered controller (generated from the
// registries; scripts/gen-docs.sh rewrites them), so none goes missing.
func TestControllerListsDocumented(t *testing.T) {
	docgen.CheckMarkdown(t, "../README.md", "controllers", controllerList())
	docgen.CheckMarkdown(t, "../docs/index.md", "controllers", strings.ReplaceAll(controllerList(), "](docs/", "]("))
	docgen.CheckMarkdown(t, "../docs/controllers.md", "controllers", controllerTable())
}

// TestExperimentsHaveEveryController: the loss-resilience sweeps, which
// compare every controller, name each registered one.
func TestExperimentsHaveEveryController(t *testing.T) {
	for _, exp := range []string{"loss-resilience", "loss-resilience-quick"} {
		src, ok := experiments.Source(exp)
		if !ok {
			t.Fatalf("no built-in experiment %s", exp)
		}
		for _, n := range append(Registry.Names(), DgramRegistry.Names()...) {
			if IsProbe(n) {
				continue // a path probe, not congestion control
			}
			if !strings.Contains(string(src), "- "+n+"\n") && !strings.Contains(string(src), "- "+n+"?\n") {
				t.Errorf("experiments/%s.yaml does not list controller %s in its cc sweep", exp, n)
			}
		}
	}
}
