package agent

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"golang.org/x/crypto/ssh"

	"cclab/internal/psk"
)

// Credentials authenticate this side and decide which peers are accepted: a
// PSK file (perf.LoadKeyFile's format, 0600) and/or an Ed25519 identity
// (private key file, OpenSSH or PKCS#8 PEM, 0600) plus an authorized-keys
// file of peers' public keys (OpenSSH authorized_keys lines, "ssh-ed25519
// BASE64 NAME").
//
// A client uses Ed25519 when it has an identity and authorized keys, the
// PSK (the file's first key) otherwise. A server accepts either method it
// has credentials for.
type Credentials struct {
	keys       *psk.Keys          // nil: no PSK
	identity   ed25519.PrivateKey // nil: no Ed25519 identity
	authorized []authorizedKey    // peers' public keys
}

// authorizedKey is one accepted public key and its name (the line's comment).
type authorizedKey struct {
	name string
	pub  ed25519.PublicKey
}

// Limits of the key files.
const (
	maxIdentityFile   = 16 << 10 // bytes
	maxAuthorizedFile = 1 << 20  // bytes
	maxAuthorizedKeys = 4096     // lines with a key
	maxPeerName       = 64       // characters of an authorized key's name
)

// LoadCredentials reads the credentials; an empty path leaves that part out.
// An identity needs an authorized-keys file and the other way round; at
// least a PSK file or the pair must be given. Errors name the flag
// (-psk-file, -identity, -authorized-keys).
func LoadCredentials(pskFile, identityFile, authorizedFile string) (*Credentials, error) {
	c := &Credentials{}
	var err error
	if pskFile != "" {
		if c.keys, err = psk.LoadKeyFile(pskFile); err != nil {
			return nil, err
		}
	}
	if (identityFile == "") != (authorizedFile == "") {
		return nil, errors.New("-identity and -authorized-keys: give both (this side's key and the peers it accepts) or neither")
	}
	if identityFile != "" {
		b, err := psk.ReadSecretFile("-identity", identityFile, maxIdentityFile)
		if err != nil {
			return nil, err
		}
		if c.identity, err = ParseIdentity(b); err != nil {
			return nil, fmt.Errorf("-identity %s: %v", identityFile, err)
		}
		b, err = readPublicFile("-authorized-keys", authorizedFile, maxAuthorizedFile)
		if err != nil {
			return nil, err
		}
		if c.authorized, err = parseAuthorizedKeys(b); err != nil {
			return nil, fmt.Errorf("-authorized-keys %s: %v", authorizedFile, err)
		}
	}
	if c.keys == nil && c.identity == nil {
		return nil, errors.New("no credentials: give -psk-file, or -identity with -authorized-keys (docs/campaigns.md, \"Keys\")")
	}
	return c, nil
}

// PSKCredentials returns credentials of pre-shared keys alone.
func PSKCredentials(keys *psk.Keys) *Credentials { return &Credentials{keys: keys} }

// Ed25519Credentials returns credentials of an identity and the public keys
// of the accepted peers by name.
func Ed25519Credentials(identity ed25519.PrivateKey, authorized map[string]ed25519.PublicKey) *Credentials {
	c := &Credentials{identity: identity}
	for name, pub := range authorized {
		c.authorized = append(c.authorized, authorizedKey{name: name, pub: pub})
	}
	return c
}

// PublicKey returns the Ed25519 identity's public key (nil without one).
func (c *Credentials) PublicKey() ed25519.PublicKey {
	if c.identity == nil {
		return nil
	}
	return c.identity.Public().(ed25519.PublicKey)
}

// peer returns the name of an authorized public key.
func (c *Credentials) peer(pub []byte) (string, bool) {
	for _, k := range c.authorized {
		if bytes.Equal(k.pub, pub) {
			return k.name, true
		}
	}
	return "", false
}

// readPublicFile reads a file of public keys: it may be world-readable but
// neither group nor others may write it (as sshd's StrictModes).
func readPublicFile(flag, path string, max int) ([]byte, error) {
	return psk.ReadFileChecked(flag, path, max, 0o022, "let group or others change the accepted keys", "644")
}

// ParseIdentity reads an Ed25519 private key: OpenSSH format (ssh-keygen -t
// ed25519 -N "", cclab agent keygen) or PKCS#8 PEM (openssl genpkey
// -algorithm ed25519). Passphrase-protected keys are refused.
func ParseIdentity(b []byte) (ed25519.PrivateKey, error) {
	k, err := ssh.ParseRawPrivateKey(b)
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return nil, errors.New("the key is passphrase-protected; an agent needs an unprotected key (cclab agent keygen, or ssh-keygen -t ed25519 -N \"\")")
	}
	if err != nil {
		return nil, fmt.Errorf("not an OpenSSH or PKCS#8 private key: %v", err)
	}
	switch k := k.(type) {
	case *ed25519.PrivateKey:
		return *k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("a %T key, want Ed25519 (ssh-keygen -t ed25519)", k)
}

// parseAuthorizedKeys reads authorized_keys lines "ssh-ed25519 BASE64 NAME"
// (OpenSSH's format without options); NAME, the comment, is required (it
// names the peer in logs and results); blank lines and # comments are
// skipped.
func parseAuthorizedKeys(b []byte) ([]authorizedKey, error) {
	var out []authorizedKey
	err := psk.ScanLines(b, maxAuthorizedFile, func(line int, s string) error {
		if !strings.HasPrefix(s, ssh.KeyAlgoED25519+" ") {
			return fmt.Errorf("line %d: want \"%s BASE64 NAME\" (only Ed25519 keys)", line, ssh.KeyAlgoED25519)
		}
		pk, name, _, _, err := ssh.ParseAuthorizedKey([]byte(s))
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		if !validPeerName(name) {
			return fmt.Errorf("line %d: want a name after the key (1..%d printable characters, no spaces), got %q", line, maxPeerName, name)
		}
		cpk, ok := pk.(ssh.CryptoPublicKey)
		if !ok {
			return fmt.Errorf("line %d: not an Ed25519 key", line)
		}
		pub, ok := cpk.CryptoPublicKey().(ed25519.PublicKey)
		if !ok {
			return fmt.Errorf("line %d: not an Ed25519 key", line)
		}
		if len(out) == maxAuthorizedKeys {
			return fmt.Errorf("line %d: more than %d keys", line, maxAuthorizedKeys)
		}
		out = append(out, authorizedKey{name: name, pub: pub})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no key (want lines \"ssh-ed25519 BASE64 NAME\", e.g. the .pub files cclab agent keygen writes)")
	}
	return out, nil
}

func validPeerName(s string) bool {
	if s == "" || len(s) > maxPeerName {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// GenerateKey writes a new Ed25519 key pair: the private key to path
// (OpenSSH format, mode 0600, refusing to overwrite) and its public half to
// path+".pub" as an authorized-keys line "ssh-ed25519 BASE64 name" (0644).
func GenerateKey(path, name string) (ed25519.PublicKey, error) {
	if !validPeerName(name) {
		return nil, fmt.Errorf("-name %q: want 1..%d printable characters, no spaces", name, maxPeerName)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		return nil, err
	}
	spub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spub))) + " " + name + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("-out: %v", err)
	}
	if err := errors.Join(pem.Encode(f, blk), f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("-out: %v", err)
	}
	if err := os.WriteFile(path+".pub", []byte(line), 0o644); err != nil {
		return nil, fmt.Errorf("-out: %v", err)
	}
	return pub, nil
}

// Fingerprint returns the OpenSSH SHA256 fingerprint of an Ed25519 public key.
func Fingerprint(pub ed25519.PublicKey) string {
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "invalid key"
	}
	return ssh.FingerprintSHA256(k)
}
