package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// figuresDir is the directory, beside index.html, of the figures as files.
const figuresDir = "figures"

// writeFigureFiles writes every figure of the page as SVG files into
// dir/figures/ (one file per plot: each panel of small multiples, each
// panel of a time series, named by its metric where it has one), for use
// outside the report (a paper, slides), and records each figure's files so
// the page links them. Files of an earlier report in dir are removed first.
func (p *reportPage) writeFigureFiles(dir string) error {
	fd := filepath.Join(dir, figuresDir)
	if err := os.RemoveAll(fd); err != nil {
		return err
	}
	if err := os.MkdirAll(fd, 0o755); err != nil {
		return err
	}
	used := map[string]bool{}
	write := func(section, title string, svgs, names []string) ([]string, error) {
		var files []string
		for i, svg := range svgs {
			base := section + "-" + slug(title)
			switch {
			case len(names) == len(svgs):
				base += "-" + slug(names[i])
			case len(svgs) > 1:
				base += fmt.Sprintf("-%d", i+1)
			}
			name := base
			for k := 2; used[name]; k++ {
				name = fmt.Sprintf("%s-%d", base, k)
			}
			used[name] = true
			rel := figuresDir + "/" + name + ".svg"
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+svg+"\n"), 0o644); err != nil {
				return nil, err
			}
			files = append(files, rel)
		}
		return files, nil
	}
	var err error
	for _, set := range []struct {
		section string
		figs    []Figure
	}{{"study", p.StudyFigs}, {"comparison", p.Figures}, {"delay", p.Delay}, {"distribution", p.CDFs}} {
		for i := range set.figs {
			if set.figs[i].Files, err = write(set.section, set.figs[i].Title, set.figs[i].svgs(), set.figs[i].names); err != nil {
				return err
			}
		}
	}
	for i := range p.Series {
		if p.Series[i].Files, err = write("series", p.Series[i].Label, splitSVG(string(p.Series[i].SVG)), p.Series[i].names); err != nil {
			return err
		}
	}
	return nil
}

// svgs are a figure's plots: its SVG, or its panels.
func (f *Figure) svgs() []string {
	out := splitSVG(string(f.SVG))
	for _, p := range f.Panels {
		out = append(out, splitSVG(string(p))...)
	}
	return out
}

// splitSVG splits inline HTML holding one or more <svg> elements into the
// elements.
func splitSVG(html string) []string {
	var out []string
	for {
		i := strings.Index(html, "<svg")
		if i < 0 {
			return out
		}
		html = html[i:]
		j := strings.Index(html, "</svg>")
		if j < 0 {
			return out
		}
		out = append(out, html[:j+len("</svg>")])
		html = html[j+len("</svg>"):]
	}
}

// slug is s as a file name: lower-case letters, digits, '.' and '-'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-.")
}
