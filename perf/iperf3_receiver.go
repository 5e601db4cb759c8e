package perf

import "time"

// ToIperf3Receiver converts the receiver's account of one test (one flow,
// or every flow of a sender's -P/--bidir test, with its TestSummary) into
// iperf3's schema as iperf3 -s -J writes it: one object per test, streams
// numbered from 1 in the order the flows finished. A forward flow's stream
// was read to its end, so its sent and received bytes are the same; a
// reverse flow (this side sent) has the sender's retransmits and RTTs. The
// flow summaries are under start.cclab, the test's sum under end.cclab.
// end is when the last flow finished. intervals[] holds the flows'
// interval reports (receiver -i).
func ToIperf3Receiver(flows []FlowSummary, test *TestSummary, h Host, end time.Time) *Iperf3 {
	out := &Iperf3{Intervals: receiverIntervals(flows, test)}
	var secs float64
	for _, f := range flows {
		secs = max(secs, f.Seconds)
	}
	s := &out.Start
	s.Version, s.SystemInfo, s.Timestamp = h.Version, h.SystemInfo, timestamp(end.Add(-time.Duration(secs*float64(time.Second))))
	s.Connected = []I3Connected{}
	s.TestStart = I3TestStart{Protocol: "TCP", NumStreams: len(flows)}
	e := &out.End
	e.Streams = []I3EndStream{}
	var sumSent, sumRecv, revSent, revRecv I3Stats
	anyRev := false
	for i, f := range flows {
		if i == 0 {
			host, port := hostPort(f.Peer)
			s.Accepted = &I3Host{Host: host, Port: port}
			s.Cookie = f.Test
			if s.Cookie == "" {
				s.Cookie = f.ConnID
			}
		}
		rh, rp := hostPort(f.Peer)
		s.Connected = append(s.Connected, I3Connected{Socket: i + 1, RemoteHost: rh, RemotePort: rp})
		if f.Error != "" {
			out.Error = f.Error
		}
		if f.Dgram != nil {
			s.TestStart.Protocol = "UDP"
			u := dgramRecvStats(i+1, f.Dgram)
			e.Streams = append(e.Streams, I3EndStream{UDP: &u})
			sum := u
			sum.Socket = 0
			e.Sum, e.SumReceived = &sum, sum
			e.SumSent = I3Stats{End: u.End, Seconds: u.Seconds, Packets: u.Packets}
			continue
		}
		snd := I3Stats{Socket: i + 1, End: f.Seconds, Seconds: f.Seconds, Bytes: f.Bytes, BitsPerSecond: f.ThroughputBps, Sender: f.Reverse}
		rcv := snd
		if f.Reverse {
			snd.Retransmits, snd.MinRTT, snd.MeanRTT = ptr(f.Retransmits), usec(f.MinRTTms), usec(f.MeanSRTTms)
			e.SenderCongestion = f.CC
		}
		e.Streams = append(e.Streams, I3EndStream{Sender: &snd, Receiver: &rcv})
		ss, sr := &sumSent, &sumRecv
		if f.Reverse && test != nil && test.ReceivedBytes > 0 {
			ss, sr, anyRev = &revSent, &revRecv, true // --bidir: the other direction
		}
		addStats(ss, snd)
		addStats(sr, rcv)
	}
	if len(flows) > 0 && flows[0].Dgram == nil {
		e.SumSent, e.SumReceived = sumSent, sumRecv
		if anyRev {
			e.SumSentBidirReverse, e.SumReceivedBidirReverse = &revSent, &revRecv
		}
	}
	e.CPU = h.cpu()
	s.Cclab = flows
	if test != nil {
		e.Cclab = test
	}
	return out
}

// addStats adds a stream's bytes and retransmits to a sum over
// streams that ran at once (the sum's seconds are the longest's).
func addStats(sum *I3Stats, s I3Stats) {
	sum.End, sum.Seconds = max(sum.End, s.End), max(sum.Seconds, s.Seconds)
	sum.Bytes += s.Bytes
	sum.BitsPerSecond = bps(sum.Bytes, sum.Seconds)
	sum.Sender = s.Sender
	if s.Retransmits != nil {
		sum.Retransmits = ptr(*s.Retransmits + valueOr(sum.Retransmits))
	}
}

func valueOr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// dgramRecvStats is a datagram flow's UDP account at the receiver: packets
// are those delivered plus those lost in the network.
func dgramRecvStats(socket int, d *DgramReport) I3Stats {
	packets := int64(d.Datagrams + d.LostNetwork)
	pct := 0.0
	if packets > 0 {
		pct = 100 * float64(d.LostNetwork) / float64(packets)
	}
	return I3Stats{Socket: socket, End: d.Seconds, Seconds: d.Seconds, Bytes: int64(d.Bytes), BitsPerSecond: d.ThroughputBps,
		JitterMs: ptr(d.Jitterms), LostPackets: ptr(int64(d.LostNetwork)), Packets: ptr(packets), LostPercent: ptr(pct)}
}

// receiverIntervals is iperf3's intervals[] of the receiver's flows: the
// k-th element has each flow's k-th interval report (socket i+1 for flow i)
// and their sum (over the forward flows; with --bidir, the reverse flows'
// sum is sum_bidir_reverse). Each flow's intervals count from when it was
// accepted, so a sum spans its streams' earliest start to latest end.
func receiverIntervals(flows []FlowSummary, test *TestSummary) []I3Interval {
	out := []I3Interval{}
	bidir := test != nil && test.ReceivedBytes > 0 && test.SentBytes > 0
	for k := 0; ; k++ {
		var iv I3Interval
		var sum, rev *I3Stats
		for i, f := range flows {
			if k >= len(f.Intervals) {
				continue
			}
			st := recvIntervalStats(i+1, f, f.Intervals[k])
			iv.Streams = append(iv.Streams, st)
			p := &sum
			if bidir && f.Reverse {
				p = &rev
			}
			*p = addInterval(*p, st)
		}
		if iv.Streams == nil {
			return out
		}
		if sum == nil {
			sum, rev = rev, nil
		}
		iv.Sum, iv.SumBidirReverse = *sum, rev
		out = append(out, iv)
	}
}

// recvIntervalStats is one interval report of flow f in iperf3's keys: a
// stream's bytes and rate; retransmits, snd_cwnd and rtt (µs) where this
// side sent (reverse); packets, lost_packets, lost_percent and jitter_ms in
// datagram mode.
func recvIntervalStats(socket int, f FlowSummary, iv RecvInterval) I3Stats {
	st := I3Stats{Socket: socket, Start: iv.Start, End: iv.End, Seconds: iv.End - iv.Start, Bytes: iv.Bytes,
		BitsPerSecond: iv.BitsPerSec, Omitted: ptr(false), Sender: f.Reverse}
	switch {
	case f.Mode == ModeDatagram:
		packets := int64(iv.Datagrams + iv.LostNetwork)
		st.Packets, st.LostPackets, st.JitterMs = ptr(packets), ptr(int64(iv.LostNetwork)), ptr(iv.Jitterms)
		st.LostPercent = ptr(0.0)
		if packets > 0 {
			*st.LostPercent = 100 * float64(iv.LostNetwork) / float64(packets)
		}
	case f.Reverse:
		st.Retransmits, st.SndCwnd, st.RTT = ptr(iv.Retransmits), ptr(int64(iv.Cwnd)), usec(iv.SRTTms)
	}
	return st
}

// addInterval adds a stream's interval to a sum (nil: none yet) as iperf3
// sums its streams: bytes, rates, retransmits and packets added; jitter
// the streams' mean weighted by their packets.
func addInterval(sum *I3Stats, st I3Stats) *I3Stats {
	if sum == nil {
		s := st
		s.Socket, s.SndCwnd, s.RTT = 0, nil, nil
		s.Omitted = ptr(false)
		if st.Packets != nil { // the sum's own counters, added to in place below
			s.Packets, s.LostPackets = ptr(*st.Packets), ptr(*st.LostPackets)
			s.JitterMs, s.LostPercent = ptr(*st.JitterMs), ptr(*st.LostPercent)
		}
		return &s
	}
	sum.Start, sum.End = min(sum.Start, st.Start), max(sum.End, st.End)
	sum.Seconds = sum.End - sum.Start
	sum.Bytes += st.Bytes
	sum.BitsPerSecond += st.BitsPerSecond
	if st.Retransmits != nil {
		sum.Retransmits = ptr(*st.Retransmits + valueOr(sum.Retransmits))
	}
	if st.Packets != nil && sum.Packets != nil {
		n := float64(*sum.Packets) // streams already in the sum, weighting their mean jitter
		*sum.Packets += *st.Packets
		*sum.LostPackets += *st.LostPackets
		*sum.JitterMs = (*sum.JitterMs*n + *st.JitterMs*float64(*st.Packets)) / max(float64(*sum.Packets), 1)
		*sum.LostPercent = 100 * float64(*sum.LostPackets) / max(float64(*sum.Packets), 1)
	}
	return sum
}
