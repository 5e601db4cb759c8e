package campaign

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"cclab/link"
	"cclab/scenario"
	"cclab/transport"
)

// profileRunner is a fake runner whose outcomes depend on the path: RTT
// 10 ms within a group, 100 ms across, goodput 8 Mbit/s, and a sender qlog
// of 20 packets, the 5th and 6th lost, on inter-group paths.
type profileRunner struct{}

func (profileRunner) Run(ctx context.Context, t Transfer) (*Outcome, error) {
	rtt := 10.0
	var q []byte
	if t.From.Group != t.To.Group {
		rtt = 100
		var b bytes.Buffer
		for i := 0; i < 20; i++ {
			fmt.Fprintf(&b, "\x1e{\"time\":%d,\"name\":\"transport:packet_sent\",\"data\":{\"header\":{\"packet_number\":%d},\"raw\":{\"length\":1200}}}\n", i, i*1200)
			if i == 6 {
				b.WriteString("\x1e{\"time\":7,\"name\":\"recovery:packet_lost\",\"data\":{\"header\":{\"packet_number\":4800},\"length\":1200,\"trigger\":\"reordering_threshold\"}}\n")
				b.WriteString("\x1e{\"time\":7,\"name\":\"recovery:packet_lost\",\"data\":{\"header\":{\"packet_number\":6000},\"length\":1200,\"trigger\":\"reordering_threshold\"}}\n")
			}
		}
		q = b.Bytes()
	}
	return &Outcome{Seconds: 1, Bytes: 1e6, GoodputBps: 8e6, Retransmits: 2, PacketsSent: 100, Unnecessary: 1, RTOs: 1,
		RTOCauses: map[string]int64{"burst_loss": 1}, MinRTTms: rtt, MeanSRTTms: rtt * 1.5, SenderQlog: q}, nil
}

func runProfileCampaign(t *testing.T) (*Spec, []Row) {
	s := testSpec(t, 4, 3, 2, "")
	st := openTestStore(t, sqliteDB(t))
	if _, err := (&Scheduler{Spec: s, Store: st, Runner: profileRunner{}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	return s, rows
}

func TestETHTransfersAndReport(t *testing.T) {
	s, rows := runProfileCampaign(t)
	ts := ETHTransfers(s, rows)
	if got, want := len(ts), len(s.Plan()); got != want {
		t.Fatalf("got %d transfers, want %d", got, want)
	}
	groups := map[string]int{}
	for _, x := range ts {
		groups[x.Group]++
		if x.LossRate != 0.02 || x.PacketsSent != 100 || x.Unnecessary != 1 || x.RTOCauses["burst_loss"] != 1 || x.Failed {
			t.Fatalf("transfer %+v", x)
		}
	}
	// h1..h4 in groups g1, g0, g1, g0: 4 of 12 ordered pairs intra.
	if got, want := groups[GroupIntra], 4*3*2; got != want {
		t.Errorf("intra transfers: got %d, want %d (groups %v)", got, want, groups)
	}
	var b bytes.Buffer
	if err := WriteReport(&b, s, "c.db", rows, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"test (spec digest " + s.Digest(), "72 planned", "intra", "inter", "<table", "<h2>Per path and variant</h2>"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// One row per path and variant (12 paths × 3 variants), each with its
	// own 2 transfers (rounds): 8 Mbit/s every time.
	if got, want := strings.Count(b.String(), "<td>2</td><td>0</td><td>8.000 Mbit/s ± 0.000 Mbit/s</td>"), 12*3; got != want {
		t.Errorf("per-path rows with goodput 8 Mbit/s: got %d, want %d", got, want)
	}
	// A figure per path: the goodput CDF, and the qlog series where the
	// transfers had qlogs (the 8 inter paths).
	if got, want := strings.Count(b.String(), "<h2>Path h"), 12; got != want {
		t.Errorf("path figures: got %d, want %d", got, want)
	}
	if strings.Contains(b.String(), "Replay against measurement") {
		t.Errorf("report has a replay table without a replay")
	}
}

// TestProfileScenario: the profiles reflect the measured paths, and the
// written scenario is one cclab run accepts (scenario.ParseScenario).
func TestProfileScenario(t *testing.T) {
	s, rows := runProfileCampaign(t)
	ps := Profiles(s, rows)
	if got, want := len(ps), 12; got != want {
		t.Fatalf("got %d profiles, want %d", got, want)
	}
	for _, p := range ps {
		inter := p.Group == GroupInter
		wantRTT := 10 * time.Millisecond
		if inter {
			wantRTT = 100 * time.Millisecond
		}
		// The loss rate: the retransmissions over the packets sent
		// without a qlog; with one, the losses it shows over its
		// transmissions (2 of 20, declared: no ACK in it).
		wantLoss := 0.02
		if inter {
			wantLoss = 0.1
		}
		if p.MinRTT != wantRTT || p.SRTT[1] != wantRTT*3/2 || p.RateBps != 8e6 || p.LossRate != wantLoss || p.FromQlog != inter {
			t.Errorf("profile %s: %+v", p.Name, p)
		}
		// No ACK trains: the goodput, a bound; the queue a bound too, the
		// larger of the queueing seen (the 90th-percentile SRTT over the
		// min RTT) and one BDP, at 8 Mbit/s in packets of the datagram
		// the qlogs' 1,200-byte segments need (the default 1,200-byte
		// datagram without qlogs) and the IPv4 and UDP headers.
		wantDgram, wantPacket := transport.DatagramFor(1200), transport.DatagramFor(1200)+28
		if !inter {
			wantDgram, wantPacket = 0, 1228
		}
		if !p.RateBound || !p.QueueBound || p.Datagram != wantDgram || !p.Discovered || p.Packet != wantPacket || len(p.Warnings) != 2 {
			t.Errorf("profile %s: bounds %v/%v, datagram %d (discovered %v), packet %d, warnings %q: want bounds, datagram %d discovered, %d bytes, two warnings",
				p.Name, p.RateBound, p.QueueBound, p.Datagram, p.Discovered, p.Packet, p.Warnings, wantDgram, wantPacket)
		}
		pk := func(d time.Duration) int { return int(math.Round(d.Seconds() * 8e6 / 8 / float64(wantPacket))) }
		if want := max(pk(wantRTT/2), pk(wantRTT), MinQueuePackets); p.QueuePackets != want {
			t.Errorf("profile %s: queue %d packets, want %d", p.Name, p.QueuePackets, want)
		}
		if inter {
			// 6 qlogs of 20 packets, losses at 4 and 5, joined: 6 good→lost
			// of 107 pairs starting good, 6 lost→good of 12 starting lost.
			if p.Fit.Packets != 20*3*2 || p.Fit.Losses != 2*3*2 || math.Abs(p.Loss.P-6.0/107) > 1e-12 || p.Loss.R != 0.5 {
				t.Errorf("profile %s: Gilbert fit %+v, want p 6/107, r 1/2", p.Name, p.Loss)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteProfileScenario(&b, s, ps); err != nil {
		t.Fatal(err)
	}
	exp, err := scenario.ParseScenario("profile.yaml", b.Bytes())
	if err != nil {
		t.Fatalf("the profile scenario does not parse: %v\n%s", err, b.String())
	}
	if got, want := len(exp.Points), 12*3; got != want {
		t.Errorf("scenario points: got %d, want %d (paths × variants)\n%s", got, want, b.String())
	}
	if !strings.Contains(b.String(), "loss: \""+(link.GEConfig{P: 6.0 / 107, R: 0.5, K: 1}).Spec()+"\"") {
		t.Errorf("scenario lacks the inter paths' Gilbert loss:\n%s", b.String())
	}
	// The replay runs sized transfers until done in the simulator; the
	// live backend refuses until_done (its sized flows end by themselves).
	for _, c := range []struct {
		backends []string
		want     bool
	}{{nil, s.Transfer.Bytes > 0}, {[]string{"sim", "live"}, false}} {
		exp, err := ValidationExperiment(s, ps, c.backends)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(exp.Source), "until_done: true"); got != c.want {
			t.Errorf("replay on %v: until_done %v, want %v", c.backends, got, c.want)
		}
	}
}

// FuzzLossSequence: any trace gives a sequence and a count of bad records,
// never a panic; losses never outnumber packets.
func FuzzLossSequence(f *testing.F) {
	f.Add([]byte("\x1e{\"name\":\"transport:packet_sent\",\"data\":{\"header\":{\"packet_number\":0}}}\n\x1e{\"name\":\"recovery:packet_lost\",\"data\":{\"header\":{\"packet_number\":0}}}\n"))
	f.Add([]byte("\x1e{\"name\":\"transport:packet_sent\"}\n\x1e[1,2]\n\x1enot json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, bad := lossSequence(b)
		if bad < 0 || len(seq) > len(b) {
			t.Errorf("got %d packets, %d bad from %d bytes", len(seq), bad, len(b))
		}
	})
}
