package agent

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	key := filepath.Join(dir, "id")
	pub, err := GenerateKey(key, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	pubLine, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	// A PKCS#8 key, as openssl genpkey -algorithm ed25519 writes it.
	_, p8, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(p8)
	pkcs8 := write("pkcs8", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), 0o600)
	auth := write("auth", "# schedulers\n"+string(pubLine), 0o644)
	psk := write("psk", "lab "+hexKeyA+"\n", 0o600)
	for _, tc := range []struct {
		name                string
		psk, identity, auth string
		wantErr             string // substring; "" for success
	}{
		{"psk", psk, "", "", ""},
		{"ed25519", "", key, auth, ""},
		{"both", psk, key, auth, ""},
		{"pkcs8", "", pkcs8, auth, ""},
		{"none", "", "", "", "no credentials"},
		{"identity alone", "", key, "", "-authorized-keys"},
		{"readable identity", "", write("open-id", mustRead(t, key), 0o644), auth, "-identity"},
		{"writable authorized keys", "", key, write("open-auth", string(pubLine), 0o666), "chmod 644"},
		{"not a key", "", write("junk", "hello\n", 0o600), auth, "not an OpenSSH or PKCS#8"},
		{"rsa line", "", key, write("rsa", "ssh-rsa AAAAB3NzaC1yc2E x\n", 0o644), "only Ed25519"},
		{"nameless key", "", key, write("noname", strings.Join(strings.Fields(string(pubLine))[:2], " ")+"\n", 0o644), "want a name"},
		{"bad base64", "", key, write("b64", "ssh-ed25519 !!!! x\n", 0o644), "line 1"},
		{"empty authorized keys", "", key, write("empty", "# nobody\n", 0o644), "no key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadCredentials(tc.psk, tc.identity, tc.auth)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				if name, ok := c.peer(pub); !ok || name != "host-a" {
					t.Errorf("authorized key: got %q %v, want host-a", name, ok)
				}
			}
		})
	}
	if _, err := GenerateKey(key, "again"); err == nil {
		t.Error("GenerateKey over an existing file: no error")
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzParseAuthorizedKeys: the authorized-keys parser never panics, and
// what it accepts is 1..maxAuthorizedKeys named Ed25519 keys.
func FuzzParseAuthorizedKeys(f *testing.F) {
	f.Add([]byte("# schedulers\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl scheduler\n"))
	f.Add([]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"))
	f.Add([]byte("ssh-rsa AAAAB3NzaC1yc2E x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := parseAuthorizedKeys(b)
		if err != nil {
			return
		}
		if len(keys) < 1 || len(keys) > maxAuthorizedKeys {
			t.Errorf("%d keys accepted", len(keys))
		}
		for _, k := range keys {
			if len(k.pub) != ed25519.PublicKeySize || !validPeerName(k.name) {
				t.Errorf("accepted key %q of %d bytes", k.name, len(k.pub))
			}
		}
	})
}

// FuzzParseIdentity: the identity parser never panics and returns only
// whole Ed25519 keys.
func FuzzParseIdentity(f *testing.F) {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseIdentity(b)
		if err == nil && len(k) != ed25519.PrivateKeySize {
			t.Errorf("accepted a key of %d bytes", len(k))
		}
	})
}
