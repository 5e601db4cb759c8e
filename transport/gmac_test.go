package transport

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGMACMatchesGCM checks gmac's tags against the standard library's
// AES-GCM with the data as associated data and no plaintext, for every
// length up to 1,100 bytes (every tail and step boundary) and random lengths
// up to 65,535, under random keys and nonces; and that verify refuses a
// flipped bit in the data or the tag.
func TestGMACMatchesGCM(t *testing.T) {
	if !useGHASH512 {
		t.Skip("no wide GHASH on this CPU")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	buf := make([]byte, 65535+7)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lengths := make([]int, 0, 1300)
	for n := 0; n <= 1100; n++ {
		lengths = append(lengths, n)
	}
	for range 200 {
		lengths = append(lengths, rng.IntN(65536))
	}
	lengths = append(lengths, 65535, 65456, 65472, 4096, 8192)
	for i, n := range lengths {
		var key [16]byte
		nonce := make([]byte, 12)
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		for j := range nonce {
			nonce[j] = byte(rng.Uint32())
		}
		data := buf[i%7 : i%7+n] // unaligned starts too
		g, want := gmacAgainstGCM(t, key[:], nonce, data)
		bad := append([]byte(nil), want...)
		bad[i%TagLen] ^= 1 << (i % 8)
		if g.verify(bad, nonce, data) {
			t.Fatalf("len %d: verify took a flipped tag", len(data))
		}
		if len(data) > 0 {
			k := rng.IntN(len(data))
			data[k] ^= 0x80
			ok := g.verify(want, nonce, data)
			data[k] ^= 0x80
			if ok {
				t.Fatalf("len %d: verify took a flipped data bit at %d", len(data), k)
			}
		}
	}
}

// BenchmarkGMAC times one packet's tag, the standard library's AES-GCM
// (associated data only) against gmac's wide GHASH, at the base datagram
// size and at the discovered loopback size.
func BenchmarkGMAC(b *testing.B) {
	key := make([]byte, 16)
	nonce := make([]byte, 12)
	blk, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(blk)
	var g gmac
	if useGHASH512 {
		g.init(blk)
	}
	for _, n := range []int{DefaultMaxDatagram, 65456} {
		data := make([]byte, n)
		tag := make([]byte, 0, TagLen)
		b.Run(fmt.Sprintf("stdlib/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				aead.Seal(tag[:0], nonce, nil, data)
			}
		})
		b.Run(fmt.Sprintf("wide/%d", n), func(b *testing.B) {
			if !useGHASH512 {
				b.Skip("no wide GHASH on this CPU")
			}
			var t [TagLen]byte
			b.SetBytes(int64(n))
			for b.Loop() {
				g.tag(&t, nonce, data)
			}
		})
	}
}

// FuzzGMAC checks gmac's tag against the standard library's AES-GCM (the
// data as associated data, no plaintext) for any key, nonce and data the
// fuzzer finds, at any alignment: the wide GHASH is hand-written, so every
// input is a differential test against the reference implementation.
func FuzzGMAC(f *testing.F) {
	if !useGHASH512 {
		f.Skip("no wide GHASH on this CPU: the tags come from the standard library itself")
	}
	f.Add(make([]byte, 16), make([]byte, 12), []byte{}, uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{1}, 12), bytes.Repeat([]byte{0xa5}, 257), uint8(3))
	f.Add([]byte("0123456789abcdef"), []byte("nonce-twelve"), bytes.Repeat([]byte("pattern!"), 130), uint8(15))
	f.Fuzz(func(t *testing.T, key, nonce, data []byte, off uint8) {
		if len(key) != 16 || len(nonce) != 12 {
			return // AES-128 keys and 96-bit nonces only, as the sealer uses
		}
		buf := make([]byte, int(off%16)+len(data))
		d := buf[off%16:] // at any alignment
		copy(d, data)
		gmacAgainstGCM(t, key, nonce, d)
	})
}

// gmacAgainstGCM keys a gmac with key, computes data's tag under nonce with it
// and with the standard library's AES-GCM (data as associated data, no
// plaintext), fails t unless the two agree and verify accepts the tag, and
// returns the gmac and the tag.
func gmacAgainstGCM(t *testing.T, key, nonce, data []byte) (*gmac, []byte) {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	want := aead.Seal(nil, nonce, nil, data)
	g := new(gmac)
	g.init(b)
	var got [TagLen]byte
	g.tag(&got, nonce, data)
	if !bytes.Equal(got[:], want) {
		t.Fatalf("len %d: tag %x, want %x", len(data), got, want)
	}
	if !g.verify(want, nonce, data) {
		t.Fatalf("len %d: verify refused the right tag", len(data))
	}
	return g, want
}
