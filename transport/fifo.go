package transport

// fifo is a first-in first-out queue (an endpoint's accepted connections
// waiting for the application) that reuses its slice: taking the front by
// reslicing (q = q[1:]) lost the slice's head room, so every few values an
// append allocated a new one.
type fifo[T any] struct {
	q    []T
	head int // q[head:] are queued
}

// push appends v.
func (f *fifo[T]) push(v T) {
	if f.head > 0 && len(f.q) == cap(f.q) && 2*f.head >= len(f.q) {
		n := copy(f.q, f.q[f.head:]) // move the queued ones down instead of growing
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	f.q = append(f.q, v)
}

// pop removes and returns the front, or the zero T if the queue is empty.
func (f *fifo[T]) pop() T {
	var zero T
	if f.head == len(f.q) {
		return zero
	}
	v := f.q[f.head]
	f.q[f.head] = zero
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return v
}

// len returns the number queued.
func (f *fifo[T]) len() int { return len(f.q) - f.head }
