package transport

import (
	"bytes"
	"testing"
)

// TestSealerWideInterop checks that a sealer with the wide GHASH and one
// with the standard library's AES-GCM (useGHASH512 cleared) seal a packet
// to the same bytes and open each other's packets, and refuse an altered
// one: the wide path changes nothing on the wire.
func TestSealerWideInterop(t *testing.T) {
	if !useGHASH512 {
		t.Skip("no wide GHASH on this CPU")
	}
	key, iv := bytes.Repeat([]byte{7}, 16), bytes.Repeat([]byte{9}, 12)
	var wide, std sealer
	wide.init(key, iv, false)
	useGHASH512 = false
	std.init(key, iv, false)
	useGHASH512 = true
	if !wide.wide || std.wide {
		t.Fatalf("wide.wide %v std.wide %v, want true false", wide.wide, std.wide)
	}
	for _, n := range []int{20, 1149, 9000, 65456} {
		a, b := make([]byte, n+TagLen), make([]byte, n+TagLen)
		for i := range n {
			a[i] = byte(i * 31)
		}
		copy(b, a[:n])
		la := wide.seal(a, 12, n, pnSpaceShort, uint64(n))
		lb := std.seal(b, 12, n, pnSpaceShort, uint64(n))
		if la != lb || !bytes.Equal(a, b) {
			t.Fatalf("len %d: wide seal %x..., std %x...", n, a[n:], b[n:])
		}
		if got := std.open(a, 12, pnSpaceShort, uint64(n)); got != n {
			t.Errorf("len %d: std opens wide's packet to %d, want %d", n, got, n)
		}
		if got := wide.open(b, 12, pnSpaceShort, uint64(n)); got != n {
			t.Errorf("len %d: wide opens std's packet to %d, want %d", n, got, n)
		}
		if got := wide.open(b, 12, pnSpaceShort, uint64(n)+1); got != -1 {
			t.Errorf("len %d: wide opens under the wrong packet number: %d, want -1", n, got)
		}
		b[n/2] ^= 1
		if got := wide.open(b, 12, pnSpaceShort, uint64(n)); got != -1 {
			t.Errorf("len %d: wide opens an altered packet: %d, want -1", n, got)
		}
	}
}
