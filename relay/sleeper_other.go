//go:build !linux

package relay

import "time"

// sleeper is the scheduler's interruptible sleep (on Linux a precise
// ppoll on an eventfd, sleeper_linux.go): here a Go timer, which may wake
// up to about 1 ms late, and a channel.
type sleeper struct {
	ch    chan struct{}
	timer *time.Timer
}

func newSleeper(bool, bool) (*sleeper, error) {
	return &sleeper{ch: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}, nil
}

// sleep blocks for d or until wake; it reports whether it was woken.
func (s *sleeper) sleep(d time.Duration) bool {
	s.timer.Reset(max(d, 0))
	select {
	case <-s.timer.C:
		return false
	case <-s.ch:
		s.timer.Stop()
		return true
	}
}

// wake interrupts a sleep in progress or the next one.
func (s *sleeper) wake() {
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *sleeper) close() {}

// drain does nothing (sleep takes the wake from the channel).
func (s *sleeper) drain() {}

// eventFD is -1: there is no descriptor to wait on in epoll.
func (s *sleeper) eventFD() int { return -1 }
