// Package experiments embeds cclab's built-in experiment scenarios (YAML
// files in this directory, format in docs/scenarios.md). "cclab list" lists
// them and "cclab run NAME" runs one; NAME-quick, if present, is the quick
// form selected by -quick.
package experiments

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names returns the built-in experiments' names, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Source returns the YAML of the named built-in experiment.
func Source(name string) ([]byte, bool) {
	b, err := files.ReadFile(name + ".yaml")
	return b, err == nil
}
