package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
)

// iperf3Doc is what TransferPage reads of an iperf3-schema -J document
// (sender -J, receiver -J, or iperf3's own): the intervals' streams.
type iperf3Doc struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol string `json:"protocol"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Streams []struct {
			Socket        int      `json:"socket"`
			End           float64  `json:"end"`
			BitsPerSecond float64  `json:"bits_per_second"`
			SndCwnd       *float64 `json:"snd_cwnd"` // bytes
			RTT           *float64 `json:"rtt"`      // µs
		} `json:"streams"`
	} `json:"intervals"`
	Error string `json:"error"`
}

// TransferPage writes an HTML page (inline SVG, no scripts) with one
// transfer's throughput, congestion window and smoothed RTT over time, a
// line per stream, from its -J document in iperf3's schema (title names
// it). A document with no intervals is an error.
func TransferPage(w io.Writer, r io.Reader, title string) error {
	var doc iperf3Doc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return fmt.Errorf("not an iperf3-schema JSON document: %v", err)
	}
	if len(doc.Intervals) == 0 {
		if doc.Error != "" {
			return fmt.Errorf("the transfer failed before its first interval: %s", doc.Error)
		}
		return fmt.Errorf("no intervals (run the sender with -i, e.g. -i 0.5)")
	}
	tput := panel{Title: "throughput", YLabel: "Mbit/s"}
	cwnd := panel{Title: "congestion window", YLabel: "kB"}
	rtt := panel{Title: "smoothed RTT", YLabel: "ms"}
	line := map[int]int{} // socket → index in the panels' lines
	for _, iv := range doc.Intervals {
		for _, s := range iv.Streams {
			i, ok := line[s.Socket]
			if !ok {
				i = len(line)
				line[s.Socket] = i
				label := "stream " + strconv.Itoa(s.Socket)
				for _, p := range []*panel{&tput, &cwnd, &rtt} {
					p.Lines = append(p.Lines, tsLine{Label: label, Color: i})
				}
			}
			add := func(p *panel, v *float64, scale float64) {
				if v != nil {
					l := &p.Lines[i]
					l.T, l.V = append(l.T, s.End), append(l.V, *v*scale)
				}
			}
			bps := s.BitsPerSecond
			add(&tput, &bps, 1e-6)
			add(&cwnd, s.SndCwnd, 1e-3)
			add(&rtt, s.RTT, 1e-3)
		}
	}
	panels := []panel{tput}
	for _, p := range []panel{cwnd, rtt} {
		for _, l := range p.Lines {
			if len(l.T) > 0 { // a receiving side has no window or RTT
				panels = append(panels, p)
				break
			}
		}
	}
	svg, err := timeSeriesSVG(panels)
	if err != nil {
		return err
	}
	return transferTemplate.Execute(w, struct {
		Title, Version, Protocol string
		SVG                      template.HTML
	}{title, doc.Start.Version, doc.Start.TestStart.Protocol, template.HTML(svg)})
}

var transferTemplate = template.Must(template.New("transfer").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>cclab plot: {{.Title}}</title>
<style>body { font-family: sans-serif; margin: 2em auto; max-width: 60em; color: #222; } .meta { color: #666; }</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{.Protocol}} transfer{{if .Version}} by {{.Version}}{{end}}: throughput, congestion window and smoothed RTT at the end of each interval, a line per stream.</p>
{{.SVG}}
</body>
</html>
`))
