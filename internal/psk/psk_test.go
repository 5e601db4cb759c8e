package psk

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	hexKeyA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexKeyB = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
)

func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		in        string
		wantErr   string // substring; "" for success
		wantFirst string
		wantLen   int
	}{
		{hexKeyA + "\n", "", "default", 1},
		{"# campaign keys\n\neth " + hexKeyA + "\nmit " + hexKeyB + "\n", "", "eth", 2},
		{"", "no key", "", 0},
		{"zz" + hexKeyA[2:], "not hexadecimal", "", 0},
		{"0011", "want 16..64", "", 0},
		{"a b c", "fields", "", 0},
		{"bad/name " + hexKeyA, "key name", "", 0},
		{"x " + hexKeyA + "\nx " + hexKeyB, "twice", "", 0},
		{strings.Repeat("ab", 65), "want 16..64", "", 0},
	} {
		k, err := ParseKeys([]byte(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseKeys(%q): got error %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseKeys(%q): %v", tc.in, err)
			continue
		}
		if got, want := k.First(), tc.wantFirst; got != want {
			t.Errorf("ParseKeys(%q).First(): got %q, want %q", tc.in, got, want)
		}
		if got, want := k.Len(), tc.wantLen; got != want {
			t.Errorf("ParseKeys(%q).Len(): got %d, want %d", tc.in, got, want)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add([]byte(hexKeyA))
	f.Add([]byte("eth " + hexKeyA + "\n# c\nmit " + hexKeyB))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeys(b)
		if err != nil {
			return
		}
		if k.Len() < 1 || k.Len() > MaxKeys {
			t.Errorf("ParseKeys(%q): %d keys", b, k.Len())
		}
		for name, key := range k.byName {
			if !ValidName(name) || len(key) < MinKeyBytes || len(key) > MaxKeyBytes {
				t.Errorf("ParseKeys(%q) accepted key %q of %d bytes", b, name, len(key))
			}
		}
	})
}

func TestLoadKeyFilePermissions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode    os.FileMode
		wantErr string
	}{
		{0o600, ""},
		{0o400, ""},
		{0o640, "chmod 600"},
		{0o604, "chmod 600"},
	} {
		name := filepath.Join(dir, "key"+tc.mode.String())
		if err := os.WriteFile(name, []byte(hexKeyA+"\n"), tc.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(name, tc.mode) // past the umask
		_, err := LoadKeyFile(name)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("LoadKeyFile with mode %04o: got %v, want error containing %q", tc.mode, err, tc.wantErr)
		}
	}
	if _, err := LoadKeyFile(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "-psk-file") {
		t.Errorf("LoadKeyFile of a missing file: got %v, want an error naming -psk-file", err)
	}
}

// TestLoadOrCreateKey: a missing file is created with a fresh key (mode
// 0600) that later reads return; bad contents and loose permissions are
// refused naming the flag.
func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reset.key")
	a, err := LoadOrCreateKey("-reset-key-file", path)
	if err != nil || len(a) != 32 {
		t.Fatalf("create: key of %d bytes, err %v; want 32 bytes", len(a), err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %04o, want 0600", st.Mode().Perm())
	}
	b, err := LoadOrCreateKey("-reset-key-file", path)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("second load: %x, %v; want the same key %x", b, err, a)
	}
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"short", "00112233\n", 0o600, "16..64 bytes"},
		{"not hex", "zz\n", 0o600, "16..64 bytes"},
		{"readable", hex.EncodeToString(a) + "\n", 0o644, "chmod 600"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKey("-reset-key-file", p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-reset-key-file") {
			t.Errorf("%s: err %v, want one naming -reset-key-file and %q", tc.name, err, tc.want)
		}
	}
}
