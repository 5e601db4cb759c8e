//go:build !linux

package netio

import (
	"errors"
	"time"
)

// ReadySet tells which of a set of UDP sockets have datagrams waiting
// (Linux only: epoll). Elsewhere NewReadySet fails and a driver polls every
// socket.
type ReadySet struct{}

// NewReadySet fails: there is no epoll.
func NewReadySet() (*ReadySet, error) { return nil, errors.New("netio: no ReadySet on this system") }

// Add fails (no set can exist).
func (s *ReadySet) Add(c Conn, key int32) error { return errors.New("netio: no ReadySet") }

// Remove does nothing.
func (s *ReadySet) Remove(c Conn) error { return nil }

// Ready returns keys.
func (s *ReadySet) Ready(keys []int32) ([]int32, error) { return keys, nil }

// AddFD fails (no set can exist).
func (s *ReadySet) AddFD(fd int, key int32) error { return errors.New("netio: no ReadySet") }

// Wait returns keys at once.
func (s *ReadySet) Wait(keys []int32, d time.Duration, raw bool) ([]int32, bool, error) {
	return keys, true, nil
}

// CheckWait returns nil: without a ReadySet a driver waits otherwise.
func CheckWait() error { return nil }

// Close does nothing.
func (s *ReadySet) Close() error { return nil }
