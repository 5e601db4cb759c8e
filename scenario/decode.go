package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/internal/units"
)

// decoder walks a scenario's YAML tree. In collecting mode it records the
// sweep axes (lists in place of scalars) and decodes with each axis's first
// value; afterwards pick chooses the value of each axis.
type decoder struct {
	file       string
	collecting bool
	axes       []*axis
	axisOf     map[*yaml.Node]int
	pick       map[*yaml.Node]int
	optional   map[*yaml.Node]bool
	noSweep    bool                  // a list where a value is wanted is an error (YAMLDecoder), not a sweep
	topos      map[string]*yaml.Node // the scenario's named topologies (key topologies)
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) error {
	return &Error{File: d.file, Line: n.Line, Column: n.Column, Field: path, Msg: fmt.Sprintf(format, args...), node: n}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	}
	return "nothing"
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// scalar returns the scalar node for a field, resolving a sweep list to the
// picked element.
func (d *decoder) scalar(n *yaml.Node, path string) (*yaml.Node, error) {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return n, nil
	case yaml.SequenceNode:
		if d.noSweep {
			return nil, d.errAt(n, path, "want a value, got a list")
		}
		if len(n.Content) == 0 {
			return nil, d.errAt(n, path, "empty list: give a value or a list of values to sweep")
		}
		i, known := d.axisOf[n]
		if !known {
			a := &axis{node: n, Axis: Axis{Path: path, Short: ShortName(path), Line: n.Line}}
			for _, item := range n.Content {
				item = resolve(item)
				if item.Kind != yaml.ScalarNode {
					return nil, d.errAt(item, path, "a swept value must be a scalar, got %s", kindName(item))
				}
				v := item.Value
				if strings.HasSuffix(v, "?") {
					v = strings.TrimSuffix(v, "?")
					d.optional[item] = true
				}
				a.Values = append(a.Values, v)
			}
			d.axisOf[n] = len(d.axes)
			d.axes = append(d.axes, a)
			i = len(d.axes) - 1
		}
		item := resolve(n.Content[d.pick[d.axes[i].node]])
		return item, nil
	}
	return nil, d.errAt(n, path, "want a value (or a list of values to sweep), got %s", kindName(n))
}

func ShortName(path string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 && i+1 < len(path) {
		return strings.TrimPrefix(path[i+1:], ".")
	}
	return path
}

// value returns a field's text (an optional sweep value's '?' removed).
func (d *decoder) value(n *yaml.Node, path string) (string, *yaml.Node, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(strings.TrimSpace(s.Value), "?"), s, nil
}

func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	v, _, err := d.value(n, path)
	return v, err
}

func (d *decoder) enum(n *yaml.Node, path string, allowed ...string) (string, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", d.errAt(s, path, "%q is not allowed (allowed: %s)", v, strings.Join(allowed, ", "))
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	return parsed(d, n, path, func(v string) (time.Duration, error) {
		t, err := units.ParseDuration(v)
		if err == nil && t < 0 {
			err = fmt.Errorf("duration %q must not be negative", v)
		}
		return t, err
	})
}

func (d *decoder) rate(n *yaml.Node, path string) (float64, error) {
	return parsed(d, n, path, units.ParseRate)
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, d.errAt(s, path, "%q is not an integer", v)
	}
	if i < min {
		return 0, d.errAt(s, path, "%d is below the minimum %d", i, min)
	}
	return i, nil
}

// integerIn is integer with an upper bound as well.
func (d *decoder) integerIn(n *yaml.Node, path string, min, max int) (int, error) {
	i, err := d.integer(n, path, min)
	if err == nil && i > max {
		_, s, _ := d.value(n, path)
		return 0, d.errAt(s, path, "%d is above the maximum %d (allowed %d..%d)", i, max, min, max)
	}
	return i, err
}

// parsed parses n's scalar with parse, whose error (it names the value)
// is reported at n; on error the result is T's zero value.
func parsed[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, error)) (T, error) {
	var zero T
	v, s, err := d.value(n, path)
	if err != nil {
		return zero, err
	}
	x, err := parse(v)
	if err != nil {
		return zero, d.errAt(s, path, "%v", err)
	}
	return x, nil
}

// checked parses n's scalar with parse, whose error (a range check that
// does not name the value) is reported at n after the value.
func checked[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, error)) (T, error) {
	return parsed(d, n, path, func(v string) (T, error) {
		x, err := parse(v)
		if err != nil {
			err = fmt.Errorf("%q: %v", v, err)
		}
		return x, err
	})
}

func (d *decoder) size(n *yaml.Node, path string) (int, error) {
	b, err := d.bytes(n, path)
	return int(b), err
}

// bytes decodes a byte count; a unit is required: "1500B".
func (d *decoder) bytes(n *yaml.Node, path string) (int64, error) {
	return parsed(d, n, path, units.ParseSize)
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return false, err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, d.errAt(s, path, "%q is not a boolean (allowed: true, false)", v)
	}
	return b, nil
}

// fraction decodes a number in (0, 1], or a percentage ("50%").
func (d *decoder) fraction(n *yaml.Node, path string) (float64, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return 0, err
	}
	scale := 1.0
	num := v
	if strings.HasSuffix(v, "%") {
		scale, num = 100, strings.TrimSuffix(v, "%")
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(x/scale > 0 && x/scale <= 1) {
		return 0, d.errAt(s, path, "%q is not a fraction in (0, 1] (e.g. 0.5 or 50%%)", v)
	}
	return x / scale, nil
}

// path decodes a flow's hop range: "i" (one hop) or "i-j" (hops i to j,
// 0-based, inclusive).
func (d *decoder) path(n *yaml.Node, path string) ([]int, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return nil, err
	}
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return nil, d.errAt(s, path, "%q is not a hop range (\"i\" or \"i-j\", 0-based, i <= j)", v)
	}
	return []int{first, last}, nil
}

// spec validates a component spec with validate (a registry's Validate).
func (d *decoder) spec(n *yaml.Node, path string, validate func(string) error) (string, error) {
	return parsed(d, n, path, func(v string) (string, error) { return v, validate(v) })
}

// list returns the items of a list field (no sweep: the list is the value).
func (d *decoder) list(n *yaml.Node, path, what string) ([]*yaml.Node, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, path, "want a list of %s, got %s", what, kindName(n))
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		out = append(out, resolve(c))
	}
	return out, nil
}

// listOf decodes a list field (no sweep: the list is the value) with one,
// which gets each item, its path ("path[i]") and its index.
func listOf[T any](d *decoder, n *yaml.Node, path, what string, one func(n *yaml.Node, path string, i int) (T, error)) ([]T, error) {
	items, err := d.list(n, path, what)
	if err != nil {
		return nil, err
	}
	var out []T
	for i, it := range items {
		v, err := one(it, fmt.Sprintf("%s[%d]", path, i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

type fieldFn func(n *yaml.Node, path string) error

// mapping decodes a mapping's fields; unknown and duplicate keys are errors
// that list the allowed ones, and missing required fields are reported.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]fieldFn, required ...string) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		what := path
		if what == "" {
			what = "the scenario"
		}
		return d.errAt(n, path, "want a mapping with fields for %s, got %s", what, kindName(n))
	}
	var allowed []string
	for k := range fields {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		f, ok := fields[k.Value]
		if !ok {
			return d.errAt(k, sub, "unknown field %q (allowed: %s)", k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return d.errAt(k, sub, "field given twice")
		}
		seen[k.Value] = true
		if err := f(v, sub); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			sub := r
			if path != "" {
				sub = path + "." + r
			}
			return d.errAt(n, sub, "missing required field %q", r)
		}
	}
	return nil
}

// MaxPoints bounds the number of points of a sweep's grid.
const MaxPoints = 10000
