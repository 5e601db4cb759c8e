package transport

import "testing"

// TestFIFO: values come out in the order they went in, across the moves
// that reuse the slice; one in, one out reuses the slice without growing
// it; the slice stays within twice the values queued (plus one).
func TestFIFO(t *testing.T) {
	vals := make([]int, 1000)
	for i := range vals {
		vals[i] = i
	}
	var f fifo[*int]
	next, out := 0, 0
	check := func(step string) {
		t.Helper()
		if f.len() != next-out {
			t.Fatalf("%s: len %d, want %d", step, f.len(), next-out)
		}
		if f.len() > 0 && cap(f.q) > 2*f.len()+1 && len(f.q) == cap(f.q) {
			t.Fatalf("%s: %d queued in a full slice of %d", step, f.len(), cap(f.q))
		}
	}
	for round, burst := range []int{1, 5, 3, 40, 2, 17, 1, 100} {
		for range burst {
			f.push(&vals[next])
			next++
		}
		check("push")
		for range burst / 2 { // leave some queued across rounds
			v := f.pop()
			if v == nil || *v != out {
				t.Fatalf("round %d: pop = %v, want %d", round, v, out)
			}
			out++
		}
		check("pop")
	}
	for v := f.pop(); v != nil; v = f.pop() {
		if *v != out {
			t.Fatalf("drain: pop = %d, want %d", *v, out)
		}
		out++
	}
	if out != next || f.pop() != nil {
		t.Fatalf("drained %d of %d values", out, next)
	}
	c := cap(f.q)
	for i := range 10000 {
		f.push(&vals[i%len(vals)])
		if f.pop() == nil {
			t.Fatal("one in, one out: nothing to pop")
		}
	}
	if cap(f.q) != c {
		t.Errorf("one in, one out: slice capacity went from %d to %d, want unchanged", c, cap(f.q))
	}
}
