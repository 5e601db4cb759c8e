package ccalgo

import (
	"strings"
	"testing"
)

// newTest builds the controller spec with MSS testMSS, failing the test on an
// error, and returns it as its concrete type T.
func newTest[T Controller](t *testing.T, spec string) T {
	t.Helper()
	c, err := New(spec, Env{MSS: testMSS})
	if err != nil {
		t.Fatalf("New(%q): %v", spec, err)
	}
	return c.(T)
}

// specError is a spec New must refuse, with strings its error must contain.
type specError struct {
	spec string
	want []string
}

// checkSpecErrors asserts that New refuses every spec with an error
// containing each of its wanted strings.
func checkSpecErrors(t *testing.T, cases []specError) {
	t.Helper()
	for _, tc := range cases {
		_, err := New(tc.spec, Env{MSS: testMSS})
		if err == nil {
			t.Errorf("New(%q): got nil error", tc.spec)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%q): got %q, want it to contain %q", tc.spec, err, w)
			}
		}
	}
}
