package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/quic-go/quic-go"
)

// alpn is the ALPN protocol both quic-go ends agree on.
const alpn = "cclab-ccbench"

// selfSignedTLS returns a server TLS config with a fresh self-signed ECDSA
// P-256 certificate for 127.0.0.1 / localhost.
func selfSignedTLS() (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ccbench"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{alpn},
	}, nil
}

// quicResult is one quic-go transfer.
type quicResult struct {
	Bytes   int64         // stream bytes the server read
	Elapsed time.Duration // from the first byte written to the server's confirmation
}

// runQUIC transfers n bytes over one quic-go stream on loopback: the client
// writes n bytes and closes the stream; the server reads to EOF and answers
// with the byte count as 8 bytes; the client's clock stops when the answer
// arrives, so the time covers delivery of every byte (as cclab's
// acknowledged-and-verified transfer time does).
func runQUIC(ctx context.Context, n int64) (quicResult, error) {
	stls, err := selfSignedTLS()
	if err != nil {
		return quicResult{}, err
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", stls, &quic.Config{})
	if err != nil {
		return quicResult{}, fmt.Errorf("quic-go listen: %w", err)
	}
	defer ln.Close()

	srvErr := make(chan error, 1)
	go func() {
		srvErr <- func() error {
			conn, err := ln.Accept(ctx)
			if err != nil {
				return err
			}
			str, err := conn.AcceptStream(ctx)
			if err != nil {
				return err
			}
			got, err := io.Copy(io.Discard, str)
			if err != nil {
				return err
			}
			var b [8]byte
			for i := range 8 {
				b[i] = byte(got >> (56 - 8*i))
			}
			if _, err := str.Write(b[:]); err != nil {
				return err
			}
			if err := str.Close(); err != nil {
				return err
			}
			// Wait for the client to close the connection.
			<-conn.Context().Done()
			return nil
		}()
	}()

	ctls := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{alpn}} //nolint:gosec // loopback benchmark
	conn, err := quic.DialAddr(ctx, ln.Addr().String(), ctls, &quic.Config{})
	if err != nil {
		return quicResult{}, fmt.Errorf("quic-go dial: %w", err)
	}
	defer conn.CloseWithError(0, "done")
	str, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return quicResult{}, err
	}
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	for left := n; left > 0; {
		k := min(int64(len(buf)), left)
		w, err := str.Write(buf[:k])
		if err != nil {
			return quicResult{}, fmt.Errorf("quic-go write: %w", err)
		}
		left -= int64(w)
	}
	if err := str.Close(); err != nil {
		return quicResult{}, err
	}
	ans, err := io.ReadAll(str)
	elapsed := time.Since(start)
	if err != nil {
		return quicResult{}, fmt.Errorf("quic-go read answer: %w", err)
	}
	if len(ans) != 8 {
		return quicResult{}, errors.New("quic-go: short answer from server")
	}
	var got int64
	for _, c := range ans {
		got = got<<8 | int64(c)
	}
	conn.CloseWithError(0, "done")
	if err := <-srvErr; err != nil && !isClosedErr(err) {
		return quicResult{}, fmt.Errorf("quic-go server: %w", err)
	}
	if got != n {
		return quicResult{}, fmt.Errorf("quic-go: server read %d bytes, want %d", got, n)
	}
	return quicResult{Bytes: got, Elapsed: elapsed}, nil
}

func isClosedErr(err error) bool {
	var ae *quic.ApplicationError
	return errors.As(err, &ae)
}
