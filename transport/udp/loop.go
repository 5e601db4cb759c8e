package udp

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/hostlimit"
	"cclab/netio"
)

// engine is the sans-I/O machine a loop drives: a transport.Endpoint, or a
// fake in tests.
type engine interface {
	Receive(now clock.Time, from netip.AddrPort, cp ecn.Codepoint, b []byte)
	Transmit(now clock.Time, buf []byte) (n int, to netip.AddrPort, cp ecn.Codepoint)
	Deadline() clock.Time
	OnDeadline(now clock.Time)
}

// UnreachableErrors is the number of consecutive ICMP port-unreachable
// reports (ECONNREFUSED on a connected socket, with no datagram received in
// between) after which an established connection ends with
// ErrPeerUnreachable. One report can be stale or forged (an off-path host
// can send ICMP), three in a row while we keep retransmitting mean nothing
// listens any more; RFC 1122 §4.2.3.9 lets a port unreachable abort a
// connection.
const UnreachableErrors = 3

// DefaultBatch is the number of datagrams moved per ReadBatch/WriteBatch
// call (the Linux UDPConn moves up to 64 per recvmmsg/sendmmsg).
const DefaultBatch = 64

// DefaultRecvBuf is the receive buffer per datagram, bytes: the largest UDP
// payload, so no datagram is ever truncated.
const DefaultRecvBuf = netio.MaxDatagram

// DefaultSendBuf is the transmit buffer per datagram, bytes; Transmit needs
// len(buf) ≥ the largest Config.MaxDatagram in use.
const DefaultSendBuf = 9000

// minRearm is the delay before retrying when a deadline stays in the past
// after OnDeadline (a guard against a spinning loop).
const minRearm = 50 * time.Microsecond

// loop runs an engine on a netio.Conn with two goroutines:
//
//   - the reader blocks in ReadBatch and feeds every datagram to Receive
//     under mu, calling Transmit after each one (the transport's driver
//     rule: ACKs every second segment, data released by each ACK), sends
//     what that produced, and wakes the writer only if the last Transmit
//     pass filled a batch (the writer sends the rest) or the engine's
//     deadline moved earlier than the one the writer's timer is set for
//     (armed);
//   - the writer owns the one real timer: whenever it is woken (by the reader,
//     by an application call, or by the timer) it runs OnDeadline if the
//     deadline has passed, drains Transmit into a batch under mu, sends the
//     batch with WriteBatch outside mu, and re-arms the timer from Deadline().
//
// A timer set for a deadline that has since moved later fires early; the
// writer then finds nothing due and re-arms it: at most one wake-up per
// timer period instead of one per received batch.
//
// Socket writes are serialized by sendMu, as netio.UDPConn requires.
type loop struct {
	mu    sync.Mutex // guards eng and everything the application touches in it
	cond  *sync.Cond // broadcast after every input batch, so blocked callers re-check
	eng   engine
	conn  netio.Conn
	start time.Time

	kickC      chan struct{}
	closed     chan struct{}
	writerDone chan struct{}
	wg         sync.WaitGroup
	once       sync.Once

	batch    int
	recvBuf  int
	sendBuf  int
	perBatch bool             // the reader calls Transmit once per batch, not after every datagram
	precise  bool             // short waits are slept precisely (Config.TimerSlack below goTimerSlack)
	sendMu   sync.Mutex       // serializes socket writes (reader and writer both send)
	sendCond *sync.Cond       // on sendMu: a batch's turn has come
	turn     uint64           // ticket of the next batch to send (guarded by sendMu)
	gso      *netio.GSOWriter // GSO write path; nil: plain WriteBatch (guarded by sendMu)

	// guarded by mu
	shut    bool  // Close was called
	readErr error // last socket read error other than ErrClosed (e.g. ECONNREFUSED)
	refused bool  // an ICMP port unreachable was reported on a connected socket
	// unreach counts ICMP port-unreachable reports since the last datagram
	// received; at UnreachableErrors, onUnreachable runs (if set).
	unreach       int
	onUnreachable func(now clock.Time)
	sendErr       error // last socket write error
	stats         LoopStats
	// nextTicket numbers produced batches (guarded by mu).
	nextTicket uint64
	// armed is the deadline the writer last read from the engine and set
	// its timer for (clock.Never: no timer), guarded by mu. Whoever makes
	// the engine's deadline earlier than armed must wake the writer.
	armed clock.Time
	// kicks counts wake-ups actually posted to the writer (kick calls that
	// did not coalesce with a pending one).
	kicks atomic.Uint64
	// lateHook is added to every timed wake-up's measured lateness: tests
	// starve the loop deliberately with it (Config.InjectTimerLate).
	lateHook time.Duration
	// pauseRead, if set, runs before each read batch is processed (after
	// the read, before the lateness is taken): tests stall the reader
	// with it (Config.pauseRead). Set before run; never changed.
	pauseRead func()
	// waiters are the blocked application calls, freeWaiters spare ones
	// (waiters.go; guarded by mu).
	waiters, freeWaiters []*waiter
	// one is the one-goroutine loop's state (one.go); nil: a reader and a
	// writer goroutine.
	one *oneState

	// callMu guards the caller arena (callMs, callOffs, callArena), with
	// which an application call sends what it released (callerFlush).
	callMu    sync.Mutex
	callMs    []netio.Message
	callOffs  []int
	callArena []byte
}

// LoopStats counts the driver's own work.
type LoopStats struct {
	ReadBatches  uint64 // ReadBatch calls that returned datagrams
	DatagramsIn  uint64 // datagrams handed to Receive
	WriteBatches uint64 // WriteBatch calls
	DatagramsOut uint64 // datagrams sent
	WriteErrors  uint64 // WriteBatch calls that returned an error
	ReadErrors   uint64 // ReadBatch errors other than close
	TimerFires   uint64 // wake-ups of the real timer
	Deadlines    uint64 // OnDeadline calls
	Unreachable  uint64 // times UnreachableErrors consecutive ICMP port-unreachable reports ended the connections
	Kicks        uint64 // wake-ups posted to the writer by the reader or application calls (coalesced ones not counted)
	CallerSends  uint64 // batches an application call (Conn.Read) sent itself instead of waking the writer
	GSO          bool   // the writer sends with UDP GSO
	GRO          bool   // the socket receives with UDP GRO (coalesced reads)
	GROReads     uint64 // reads that held several datagrams coalesced by the kernel
	GSODisabled  bool   // the kernel refused GSO and the writer fell back to plain batches
	OneGoroutine bool   // the driver runs in one goroutine (Config.OneGoroutine, one.go)
	RecvBuffer   int    // socket receive buffer as the kernel reports it, bytes (0: unknown)
	// TimerLate counts the writer's timed wake-ups (timer fires and
	// precise sleeps run to their end) and those later than
	// hostlimit.LateLimit against the deadline they were set for: the
	// scheduling delay the transport's timers (pacing, delayed ACKs, loss
	// timers) suffered.
	TimerLate hostlimit.Late
	// ReadLate counts the datagram reads (a coalesced GRO read is one)
	// that carried a kernel receive stamp (SO_TIMESTAMPNS) and those
	// processed more than hostlimit.LateLimit after it: how long the
	// driver was away while datagrams waited in the socket (a stall of
	// the process, or a reader behind on a full socket).
	ReadLate hostlimit.Late
	// RecvDrops is the number of datagrams the kernel dropped because the
	// socket's receive buffer was full (SO_MEMINFO; 0 where unknown), as of
	// the LoopStats call.
	RecvDrops uint64
}

func newLoop(eng engine, conn netio.Conn, batch, recvBuf, sendBuf int, gso bool) *loop {
	if batch <= 0 || batch > DefaultBatch {
		batch = DefaultBatch
	}
	if recvBuf <= 0 {
		recvBuf = DefaultRecvBuf
	}
	if sendBuf <= 0 {
		sendBuf = DefaultSendBuf
	}
	l := &loop{
		eng: eng, conn: conn, start: time.Now(),
		kickC: make(chan struct{}, 1), closed: make(chan struct{}), writerDone: make(chan struct{}),
		batch: batch, recvBuf: recvBuf, sendBuf: sendBuf, precise: true,
	}
	l.callMs = make([]netio.Message, callBatch)
	l.callOffs = make([]int, callBatch)
	l.callArena = make([]byte, callBatch*sendBuf)
	l.cond = sync.NewCond(&l.mu)
	l.sendCond = sync.NewCond(&l.sendMu)
	if gso {
		l.gso = netio.NewGSOWriter(conn)
		l.stats.GSO = l.gso != nil
	}
	return l
}

func (l *loop) run() {
	if l.one != nil {
		l.wg.Add(1)
		go l.runOne()
		return
	}
	l.wg.Add(2)
	go l.reader()
	go l.writer()
}

// now returns the project time: monotonic time since the loop started,
// offset by clock.Start so that it is never clock.Never.
func (l *loop) now() clock.Time { return l.at(time.Now()) }

// at returns the project time of wall-clock instant t (as now does for the
// present), for a caller that also needs t itself.
func (l *loop) at(t time.Time) clock.Time { return clock.Start.Add(t.Sub(l.start)) }

// kick wakes the writer (non-blocking; wake-ups coalesce).
func (l *loop) kick() {
	if l.one != nil {
		l.kickOne()
		return
	}
	select {
	case l.kickC <- struct{}{}:
		l.kicks.Add(1)
	default:
	}
}

// needKick reports whether the writer must be woken after the engine's
// state changed: its deadline moved earlier than the writer's timer (called
// with mu held).
func (l *loop) needKick() bool { return clock.Earliest(l.eng.Deadline(), l.armed) != l.armed }

// callBatch is the number of datagrams an application call sends itself
// (callerFlush) before leaving the rest to the writer.
const callBatch = 8

// callerFlush sends what an application call (Conn.Read: a window update)
// released, from the caller's goroutine: most such calls release nothing,
// and waking the writer for each would cost a goroutine hand-off per call.
// It wakes the writer if more than callBatch datagrams are due or the
// deadline moved earlier than the writer's timer. mu must not be held.
func (l *loop) callerFlush() {
	l.callMu.Lock()
	defer l.callMu.Unlock()
	l.mu.Lock()
	n, _ := l.transmit(l.now(), l.callMs, l.callOffs, l.callArena, 0, 0)
	wake := n == len(l.callMs) || l.needKick()
	var ticket uint64
	if n > 0 {
		ticket = l.takeTicket()
		l.stats.CallerSends++
		l.notify()
	}
	l.mu.Unlock()
	if n > 0 {
		l.sendBatch(ticket, l.callMs[:n], l.callOffs[:n])
	}
	if wake {
		l.kick()
	}
}

func (l *loop) reader() {
	defer l.wg.Done()
	b := l.newBuffers()
	for {
		n, err := l.conn.ReadBatch(b.in)
		if err != nil {
			if l.readFailed(err) {
				return
			}
			continue
		}
		if n == 0 {
			continue
		}
		if l.input(b, n) {
			l.kick()
		}
	}
}

// buffers are a driver goroutine's read batch and the batch of what the
// engine answers to it (ACKs, data released by ACKs), back to back in one
// arena.
type buffers struct {
	in    []netio.Message
	out   []netio.Message
	offs  []int
	arena []byte
}

func (l *loop) newBuffers() *buffers {
	b := &buffers{in: make([]netio.Message, l.batch), out: make([]netio.Message, l.batch),
		offs: make([]int, l.batch), arena: make([]byte, l.batch*l.sendBuf)}
	for i := range b.in {
		b.in[i].Buf = make([]byte, l.recvBuf)
	}
	return b
}

// readFailed records a socket read error; it reports whether the loop is
// closing (the goroutine returns).
func (l *loop) readFailed(err error) (stop bool) {
	if errors.Is(err, netio.ErrClosed) {
		return true
	}
	select {
	case <-l.closed:
		return true
	default:
	}
	l.mu.Lock()
	l.readErr = err
	l.stats.ReadErrors++
	if errors.Is(err, syscall.ECONNREFUSED) {
		l.refused = true
		if l.unreach++; l.unreach == UnreachableErrors && l.onUnreachable != nil {
			l.onUnreachable(l.now())
			l.stats.Unreachable++
		}
	}
	l.notify()
	l.mu.Unlock()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		// Unknown error: do not spin.
		time.Sleep(time.Millisecond)
	}
	return false
}

// input drives the engine with the n datagrams read into b.in and sends
// what it answered. It reports whether the writer must be woken: the last
// Transmit pass filled a batch (more to send) or the engine's deadline
// moved earlier than the writer's timer.
func (l *loop) input(b *buffers, n int) (wake bool) {
	out, offs, arena := b.out, b.offs, b.arena
	if l.pauseRead != nil {
		l.pauseRead()
	}
	l.mu.Lock()
	t := time.Now()
	now := l.at(t)
	l.readLate(b.in[:n], t.UnixNano())
	l.unreach = 0
	nout, off := 0, 0
	dgrams := 0
	more := false // the last Transmit pass filled a batch: probably more to send
	for i := 0; i < n; i++ {
		m := &b.in[i]
		// A GRO read holds several datagrams back to back: split it
		// and drive them one at a time, so the engine sees exactly
		// what it would without GRO.
		k := m.Count()
		if k > 1 {
			l.stats.GROReads++
		}
		for j := 0; j < k; j++ {
			l.eng.Receive(now, m.Addr, m.ECN, m.Datagram(j))
			if l.perBatch && (i < n-1 || j < k-1) {
				continue
			}
			// The transport's driver rule: Transmit after every input
			// datagram, so that an ACK goes out every second segment
			// and each ACK releases data at once (ACK clocking), even
			// within a batch or a coalesced read. (perBatch: once per
			// batch, stretch ACKs.)
			nout, off = l.transmit(now, out, offs, arena, nout, off)
			more = nout == len(out)
			if more {
				// The answer batch is full: send it and go on (the
				// rest goes out after the next datagram, or from the
				// writer, woken below, in parallel).
				ticket := l.takeTicket()
				l.mu.Unlock()
				l.sendBatch(ticket, out[:nout], offs[:nout])
				l.mu.Lock()
				nout, off = 0, 0
				now = l.now()
			}
		}
		dgrams += k
	}
	l.stats.ReadBatches++
	l.stats.DatagramsIn += uint64(dgrams)
	l.notify()
	var ticket uint64
	if nout > 0 {
		ticket = l.takeTicket()
	}
	// The writer is needed only if the last Transmit pass filled a
	// batch (it sends the rest, on the other core if there is one) or
	// the deadline moved earlier than its timer (a delayed ACK, a
	// pacing slot, a loss timer); otherwise everything due went out.
	wake = more || l.needKick()
	l.mu.Unlock()
	if nout > 0 {
		l.sendBatch(ticket, out[:nout], offs[:nout])
	}
	return wake
}

// readLate counts the lateness of the stamped datagrams in ms, read at
// wall-clock instant wallNs (the kernel's stamps are on the wall clock).
// Called with mu held.
func (l *loop) readLate(ms []netio.Message, wallNs int64) {
	for i := range ms {
		if rx := ms[i].RxTime; rx != 0 {
			l.stats.ReadLate.Add(time.Duration(wallNs - rx))
		}
	}
}

func (l *loop) writer() {
	defer l.wg.Done()
	defer close(l.writerDone)
	ms := make([]netio.Message, l.batch)
	offs := make([]int, l.batch)
	// Datagrams are produced back to back into one arena, so that runs of
	// them can go out as one GSO send.
	arena := make([]byte, l.batch*l.sendBuf)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-l.closed:
			// Send what is due (e.g. the ACK of a peer's FIN that just
			// finished a connection) before the socket closes.
			l.flush(ms, offs, arena)
			return
		case <-l.kickC:
		case <-timer.C:
			l.mu.Lock()
			l.stats.TimerFires++
			if l.armed != clock.Never {
				l.stats.TimerLate.Add(l.now().Sub(l.armed) + l.lateHook)
			}
			l.mu.Unlock()
		}
		for {
			d, ok := l.flush(ms, offs, arena)
			if !ok {
				timer.Stop()
				break
			}
			if d >= preciseBelow || !l.precise {
				timer.Reset(d)
				break
			}
			// A short wait (pacing): Go's timers wake up to ~1 ms late
			// here, so sleep the thread precisely, staying responsive.
			timer.Stop()
			end := time.Now().Add(d)
			if l.preciseWait(end) {
				break // kicked or closing: back to the select
			}
			l.mu.Lock()
			l.stats.TimerFires++
			l.stats.TimerLate.Add(time.Since(end) + l.lateHook)
			l.mu.Unlock()
		}
	}
}

// preciseBelow is the wait below which the writer sleeps with
// netio.Sleep instead of a Go timer: Go's timers have about 1 ms
// granularity on an idle Linux process (epoll_pwait's timeout is in ms).
const preciseBelow = 2 * time.Millisecond

// goTimerSlack is the Config.TimerSlack from which the writer waits on Go's
// timer alone: its wake-ups are about 0.1 ms late for waits of 1 ms or more
// and round shorter ones up to 1 ms (epoll_pwait's timeout is in ms).
const goTimerSlack = time.Millisecond

// preciseSlice bounds one precise sleep, so that a kick waits at most this long.
const preciseSlice = 200 * time.Microsecond

// preciseWait sleeps until end; it returns true early (with the wake-up
// left pending in kickC / closed) if the writer is kicked or the loop is
// closing.
func (l *loop) preciseWait(end time.Time) bool {
	for {
		if len(l.kickC) > 0 {
			return true
		}
		select {
		case <-l.closed:
			return true
		default:
		}
		rem := time.Until(end)
		if rem <= 0 {
			return false
		}
		netio.Sleep(min(rem, preciseSlice))
	}
}

// transmit fills ms[n:] with what the engine has to send now, each datagram
// at offset off onwards in arena (offs[i]: the offset of ms[i]), until ms is
// full or the engine has nothing more; it returns the new n and off. The
// lock must be held.
func (l *loop) transmit(now clock.Time, ms []netio.Message, offs []int, arena []byte, n, off int) (int, int) {
	for n < len(ms) {
		k, to, cp := l.eng.Transmit(now, arena[off:off+l.sendBuf])
		if k == 0 {
			break
		}
		m := &ms[n]
		m.Buf, m.N, m.Addr, m.ECN = arena[off:off+k], k, to, cp
		offs[n] = off
		off += k
		n++
	}
	return n, off
}

// flush runs expired timers and sends everything the engine has to send.
// It returns the delay until the next deadline, or ok=false if there is none.
func (l *loop) flush(ms []netio.Message, offs []int, arena []byte) (d time.Duration, ok bool) {
	for {
		l.mu.Lock()
		now := l.now()
		ran := false
		if dl := l.eng.Deadline(); dl != clock.Never && !now.Before(dl) {
			l.eng.OnDeadline(now)
			l.stats.Deadlines++
			ran = true
		}
		n, _ := l.transmit(now, ms, offs, arena, 0, 0)
		dl := l.eng.Deadline()
		l.armed = dl // the timer is set from it below (or the loop runs again)
		if ran || n > 0 {
			l.notify() // timers and sending change what waiters see
		}
		var ticket uint64
		if n > 0 {
			ticket = l.takeTicket()
		}
		l.mu.Unlock()
		if n > 0 {
			if err := l.sendBatch(ticket, ms[:n], offs[:n]); err != nil && errors.Is(err, netio.ErrClosed) {
				return 0, false
			}
			if n == len(ms) {
				continue // probably more to send
			}
		}
		if dl == clock.Never {
			return 0, false
		}
		wait := dl.Sub(l.now())
		if wait <= 0 {
			if n > 0 {
				continue
			}
			// The deadline did not move past now: retry shortly, not at once.
			return minRearm, true
		}
		return wait, true
	}
}

// takeTicket numbers a batch just produced (called with mu held), so that
// batches reach the socket in the order the engine produced them even
// though the reader and the writer send them outside mu (a reordering
// would look like loss to the peer: duplicate ACKs, spurious
// retransmissions).
func (l *loop) takeTicket() uint64 {
	t := l.nextTicket
	l.nextTicket++
	return t
}

// sendBatch sends a batch when its ticket's turn has come (reader and
// writer both send; socket writes are serialized) and counts it. Every
// ticket taken must be passed to sendBatch exactly once.
func (l *loop) sendBatch(ticket uint64, ms []netio.Message, offs []int) error {
	l.sendMu.Lock()
	for l.turn != ticket {
		l.sendCond.Wait()
	}
	if len(ms) == 0 {
		l.turn++
		l.sendCond.Broadcast()
		l.sendMu.Unlock()
		return nil
	}
	sent, calls, err := l.send(ms, offs)
	l.turn++
	l.sendCond.Broadcast()
	l.sendMu.Unlock()
	l.mu.Lock()
	l.stats.WriteBatches += uint64(calls)
	l.stats.DatagramsOut += uint64(sent)
	if err != nil {
		l.stats.WriteErrors++
		l.sendErr = err
	}
	l.mu.Unlock()
	return err
}

// send writes a batch, with GSO when available (falling back to plain
// batches for good if the kernel refuses GSO).
func (l *loop) send(ms []netio.Message, offs []int) (sent, calls int, err error) {
	if l.gso != nil {
		sent, calls, err = l.gso.WriteBatch(ms, offs)
		if err == nil || !errors.Is(err, netio.ErrGSOUnsupported) {
			return sent, calls, err
		}
		l.gso = nil
		l.mu.Lock()
		l.stats.GSODisabled = true
		l.mu.Unlock()
	}
	k, err := l.conn.WriteBatch(ms[sent:])
	return sent + k, calls + 1, err
}

// closeFlushTimeout bounds the writer's final flush at close.
const closeFlushTimeout = time.Second

// close stops both goroutines and closes the socket, after the writer has
// sent what was due.
func (l *loop) close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		if l.one != nil {
			l.one.sw.Wake()
		}
		timeout := time.After(closeFlushTimeout)
		select {
		case <-l.writerDone:
		case <-timeout:
		}
		// A barrier: wait until every batch produced so far (e.g. the
		// reader's ACK of the FIN that just let the application finish)
		// has reached the socket.
		l.mu.Lock()
		t := l.takeTicket()
		l.mu.Unlock()
		sent := make(chan struct{})
		go func() { l.sendBatch(t, nil, nil); close(sent) }()
		select {
		case <-sent:
		case <-timeout:
		}
		err = l.conn.Close()
		l.mu.Lock()
		l.shut = true
		l.notify()
		l.mu.Unlock()
		l.wg.Wait()
		if l.one != nil {
			l.one.sw.Close()
		}
	})
	return err
}
