package scenario

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// YAMLDecoder decodes other YAML files in the scenario files' error style
// (the campaign spec, docs/campaigns.md): every error is an *Error naming
// the file, line, column and field path; unknown and duplicate keys list
// the allowed ones; bad values name the allowed values or the expected
// form. Unlike a scenario, a list where a value is wanted is an error (no
// sweeps).
type YAMLDecoder struct{ d *decoder }

// FieldFunc decodes the value of one mapping field; path is the field's
// path ("hosts[2].name") for errors.
type FieldFunc func(n *yaml.Node, path string) error

// ParseYAML parses src into its document node; file names it in errors.
func ParseYAML(file string, src []byte) (*YAMLDecoder, *yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, nil, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, nil, &Error{File: file, Msg: "empty document"}
	}
	return &YAMLDecoder{&decoder{file: file, axisOf: map[*yaml.Node]int{}, pick: map[*yaml.Node]int{},
		optional: map[*yaml.Node]bool{}, noSweep: true}}, resolve(root.Content[0]), nil
}

// Errorf returns an *Error at node n for the field path.
func (y *YAMLDecoder) Errorf(n *yaml.Node, path, format string, args ...any) error {
	return y.d.errAt(n, path, format, args...)
}

// Mapping decodes a mapping's fields with fields[key]; unknown and
// duplicate keys are errors listing the allowed ones, and a missing
// required field is reported.
func (y *YAMLDecoder) Mapping(n *yaml.Node, path string, fields map[string]FieldFunc, required ...string) error {
	fs := make(map[string]fieldFn, len(fields))
	for k, f := range fields {
		fs[k] = fieldFn(f)
	}
	return y.d.mapping(n, path, fs, required...)
}

// IsList reports whether n (aliases resolved) is a list.
func IsList(n *yaml.Node) bool { return resolve(n).Kind == yaml.SequenceNode }

// List returns the items of a list field; what names them in the error
// for a value that is not a list ("hosts").
func (y *YAMLDecoder) List(n *yaml.Node, path, what string) ([]*yaml.Node, error) {
	return y.d.list(n, path, what)
}

// Str decodes a scalar's text (trimmed).
func (y *YAMLDecoder) Str(n *yaml.Node, path string) (string, error) { return y.d.str(n, path) }

// Enum decodes a scalar that must be one of allowed.
func (y *YAMLDecoder) Enum(n *yaml.Node, path string, allowed ...string) (string, error) {
	return y.d.enum(n, path, allowed...)
}

// Duration decodes a non-negative duration ("500ms", units.ParseDuration).
func (y *YAMLDecoder) Duration(n *yaml.Node, path string) (time.Duration, error) {
	return y.d.duration(n, path)
}

// Integer decodes an integer in [min, max].
func (y *YAMLDecoder) Integer(n *yaml.Node, path string, min, max int) (int, error) {
	return y.d.integerIn(n, path, min, max)
}

// Bytes decodes a byte count with a unit ("100MB", units.ParseSize).
func (y *YAMLDecoder) Bytes(n *yaml.Node, path string) (int64, error) { return y.d.bytes(n, path) }

// Rate decodes a rate with units ("10Mbit"), bits/s.
func (y *YAMLDecoder) Rate(n *yaml.Node, path string) (float64, error) { return y.d.rate(n, path) }

// Boolean decodes true or false.
func (y *YAMLDecoder) Boolean(n *yaml.Node, path string) (bool, error) { return y.d.boolean(n, path) }

// Spec decodes a component spec checked by validate (ccalgo.ParseSpec,
// transport.ParseRecoverySpec): its error is the field's.
func (y *YAMLDecoder) Spec(n *yaml.Node, path string, validate func(string) error) (string, error) {
	return y.d.spec(n, path, validate)
}

// Uint64 decodes a non-negative integer of up to 64 bits (a seed).
func (y *YAMLDecoder) Uint64(n *yaml.Node, path string) (uint64, error) {
	v, s, err := y.d.value(n, path)
	if err != nil {
		return 0, err
	}
	u, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, y.d.errAt(s, path, "%q is not a non-negative integer", v)
	}
	return u, nil
}
