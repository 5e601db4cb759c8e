package perf

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cclab/clock"
	"cclab/internal/hostlimit"
	"cclab/transport"
	"cclab/transport/udp"
)

// The receiver's side of datagram mode: flows accepted beside the stream
// connections on the same port, read into a transport.DgramMeter, their
// reports kept for the client to fetch.

// dgramEndpointConfig is the server's datagram-mode configuration: it
// accepts any datagram size up to MaxSize and agrees to ECN when asked.
func dgramEndpointConfig() transport.DgramEndpointConfig {
	d := transport.DefaultDgramConfig()
	d.MaxDatagram = MaxSize
	d.ECN = true
	d.RecvQueue = 4096
	return transport.DgramEndpointConfig{Defaults: d}
}

// startDgrams accepts datagram-mode flows alongside Serve's stream
// connections (one port serves both modes).
func (s *Server) startDgrams(ctx context.Context, cancel context.CancelFunc) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := s.ep.AcceptDgram(ctx)
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				p := s.serveDgram(ctx, c)
				if s.cfg.Once && p != nil {
					select {
					case <-p.fetched:
					case <-time.After(30 * time.Second):
					case <-ctx.Done():
					}
					cancel()
				}
			}()
		}
	}()
}

// serveDgram reads one datagram-mode flow into a meter until it ends and
// leaves its report for the client to fetch.
func (s *Server) serveDgram(ctx context.Context, c *udp.DgramConn) *pending {
	id := c.ID()
	sum := FlowSummary{ConnID: fmt.Sprintf("%016x", id), Peer: c.Peer().String(), Mode: ModeDatagram}
	req, err := parseRequest(c.Request())
	if err != nil || req.Mode != ModeDatagram {
		s.count(func(st *ServerStats) { st.BadRequests++ })
		c.Abort()
		if err == nil {
			err = fmt.Errorf("%w: datagram connection without mode %q", ErrBadRequest, ModeDatagram)
		}
		sum.Error = err.Error()
		s.finish(sum)
		return nil
	}
	if s.cfg.Admit != nil {
		if _, err := s.cfg.Admit(Admission{ConnID: id, InitialDCID: c.InitialDCID(), Peer: c.Peer(), Test: req.Test, MAC: req.MAC}); err != nil {
			s.count(func(st *ServerStats) { st.NotAdmitted++ })
			c.Abort()
			sum.Error = err.Error()
			s.finish(sum)
			return nil
		}
	}
	p := &pending{done: make(chan struct{}), fetched: make(chan struct{}), peer: c.Peer().Addr().Unmap()}
	s.expireReports()
	s.mu.Lock()
	s.reports[id] = p
	s.mu.Unlock()
	s.logf("%016x from %v: datagram flow", id, c.Peer())
	hw := watchHost(s.ep)
	dm := &dgramMeter{m: transport.DgramMeter{Offset: time.Now().UnixNano() - int64(s.ep.Now())}}
	im := s.startIntervals(FlowInterval{ConnID: sum.ConnID, Peer: sum.Peer, Mode: ModeDatagram}, func() flowCounters {
		return dm.counters(c.Stats().RecvLost)
	})
	rerr := dm.read(ctx, c)
	sum.Intervals = im.finish()
	st := c.Stats()
	m := &dm.m
	r := &DgramReport{Datagrams: m.Received, Bytes: m.Bytes, LostNetwork: st.RecvLost, Missing: m.Missing,
		RecvDropped: st.RecvDropped, CEMarked: st.RecvCE, AcksSent: st.AcksSent, OWDms: ms(m.MeanDelay()),
		OWDMinms: ms(m.DelayMin), OWDMaxms: ms(m.DelayMax), Jitterms: ms(m.Jitter), PeerAckRatio: st.PeerAckRatio}
	if m.Received > 1 {
		r.Seconds = dm.last.Sub(dm.first).Seconds()
		if r.Seconds > 0 {
			r.ThroughputBps = float64(m.Bytes) * 8 / r.Seconds
		}
	}
	sum.Bytes, sum.Seconds, sum.ThroughputBps, sum.Dgram = int64(m.Bytes), r.Seconds, r.ThroughputBps, r
	sum.Auth = dgramAuth(st)
	sum.Host = hw.report(RoleReceiver, func(h *hostlimit.Report) { h.RecvDropped += st.RecvDropped })
	p.rep = Report{V: Version, Bytes: int64(m.Bytes), Seconds: r.Seconds, Dgram: r}
	if rerr != nil {
		sum.Error = rerr.Error()
		p.rep.Error = "datagram flow failed at the receiver: " + rerr.Error()
	}
	p.at = time.Now()
	close(p.done)
	s.finish(sum)
	s.expireReports()
	return p
}

// dgramMeter is a datagram flow's meter at the receiver, read by its
// interval meter while the flow runs.
type dgramMeter struct {
	mu          sync.Mutex
	m           transport.DgramMeter
	first, last clock.Time // arrivals of the first and last datagram
}

// read reads c into the meter until the flow ends; it returns the error
// that ended it (nil at the peer's close). The meter runs on the driver's
// goroutine as datagrams arrive (udp.DgramConn.RecvFunc): this goroutine
// sleeps until the flow ends. RecvFunc takes any UDP payload: a sender's
// size discovery may raise its datagrams above the handshake's size and
// MaxSize (docs/transport.md).
func (d *dgramMeter) read(ctx context.Context, c *udp.DgramConn) error {
	return c.RecvFunc(ctx, func(at clock.Time, p []byte) {
		d.mu.Lock()
		if d.m.Received == 0 {
			d.first = at
		}
		d.last = at
		_ = d.m.Add(at, p)
		d.mu.Unlock()
	})
}

// counters are the meter's totals for an interval report; lost is the
// transport's count of packets lost in the network.
func (d *dgramMeter) counters(lost uint64) flowCounters {
	d.mu.Lock()
	defer d.mu.Unlock()
	return flowCounters{bytes: int64(d.m.Bytes), datagrams: d.m.Received, lost: lost, jitter: d.m.Jitter}
}
