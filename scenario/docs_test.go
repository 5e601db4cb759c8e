package scenario

import (
	"testing"

	"cclab/internal/docgen"
)

// TestFieldReference keeps docs/scenarios.md's field reference what the
// format's schema says (reference; scripts/gen-docs.sh rewrites it).
func TestFieldReference(t *testing.T) {
	docgen.CheckMarkdown(t, "../docs/scenarios.md", "scenario-fields", reference())
}
