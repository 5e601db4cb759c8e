//go:build !linux

package netio

import (
	"errors"
	"time"
)

// SocketWait blocks a driver goroutine until its socket is readable, Wake
// or a timeout (Linux only: epoll). Elsewhere NewSocketWait fails and a
// driver parks a reader goroutine instead.
type SocketWait struct {
	Raw bool // a raw system call (Linux)
}

// NewSocketWait fails: there is no epoll.
func NewSocketWait(Conn) (*SocketWait, error) {
	return nil, errors.New("netio: no SocketWait on this system")
}

// Wait returns at once (no SocketWait can exist).
func (w *SocketWait) Wait(time.Duration) (readable, woken bool, err error) { return false, false, nil }

// Wake does nothing.
func (w *SocketWait) Wake() {}

// Close does nothing.
func (w *SocketWait) Close() error { return nil }
