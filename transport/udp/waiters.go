package udp

import "context"

// Application calls that must block (Recv, Accept, Read, Dial, Wait, ...)
// register a waiter: the condition they wait for, evaluated by the driver
// under the lock at every change it makes (after every input batch, timer
// run or batch sent: loop.notify), and a channel the driver signals when the
// condition holds or the Endpoint closes. Only the calls whose condition
// now holds are woken: a broadcast to every blocked call (Accept loops,
// idle readers) would cost a goroutine wake-up, a thread hand-off and a
// contended lock each, per input batch.

// waiter is one blocked application call.
type waiter struct {
	cond func() bool   // called with the lock held; may have effects (it may receive)
	ch   chan struct{} // capacity 1: signalled when ok or at close
	ok   bool          // cond returned true when the driver evaluated it: the caller returns nil
}

// notify evaluates the conditions of the blocked calls and wakes those
// whose condition holds, or all of them once the Endpoint is shut; it also
// broadcasts the condition variable (Conn.Write waits on it). Called with
// the lock held.
func (l *loop) notify() {
	for _, w := range l.waiters {
		if w.ok {
			continue
		}
		if l.shut {
			w.signal()
			continue
		}
		if w.cond() {
			w.ok = true
			w.signal()
		}
	}
	l.cond.Broadcast()
}

func (w *waiter) signal() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// addWaiter registers a blocked call (lock held).
func (l *loop) addWaiter(cond func() bool) *waiter {
	var w *waiter
	if n := len(l.freeWaiters); n > 0 {
		w, l.freeWaiters = l.freeWaiters[n-1], l.freeWaiters[:n-1]
	} else {
		w = &waiter{ch: make(chan struct{}, 1)}
	}
	w.cond, w.ok = cond, false
	l.waiters = append(l.waiters, w)
	return w
}

// removeWaiter unregisters w (lock held) and keeps it for reuse.
func (l *loop) removeWaiter(w *waiter) {
	for i, x := range l.waiters {
		if x == w {
			last := len(l.waiters) - 1
			l.waiters[i] = l.waiters[last]
			l.waiters[last] = nil
			l.waiters = l.waiters[:last]
			break
		}
	}
	select { // a signal not taken
	case <-w.ch:
	default:
	}
	w.cond = nil
	l.freeWaiters = append(l.freeWaiters, w)
}

// wait blocks until cond() holds (evaluated with the lock held, here and
// by the driver: loop.notify), the context ends, or the Endpoint closes.
// The lock must be held on entry and is held on return.
func (e *Endpoint) wait(ctx context.Context, cond func() bool) error {
	if cond() {
		return nil
	}
	l := e.l
	w := l.addWaiter(cond)
	defer l.removeWaiter(w)
	for {
		if w.ok {
			return nil
		}
		if l.shut {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Unlock()
		select {
		case <-w.ch:
		case <-ctx.Done():
		}
		l.mu.Lock()
	}
}
