//go:build !linux

package netio

// GSOWriter is the UDP GSO fast path; only Linux has one.
type GSOWriter struct{}

// NewGSOWriter returns nil: no GSO on this platform.
func NewGSOWriter(Conn) *GSOWriter { return nil }

// WriteBatch is never called (NewGSOWriter returns nil).
func (*GSOWriter) WriteBatch(ms []Message, offs []int) (int, int, error) {
	return 0, 0, ErrGSOUnsupported
}

// WriteMessages is never called (NewGSOWriter returns nil).
func (*GSOWriter) WriteMessages(ms []Message) (int, int, error) {
	return 0, 0, ErrGSOUnsupported
}
