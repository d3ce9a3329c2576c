package forecast

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestKeySaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.key")
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if len(b) != 65 || b[64] != '\n' || strings.ToLower(string(b)) != string(b) {
		t.Errorf("key file %q: want 64 lowercase hex digits and a newline", b)
	}
	back, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Address() != k.Address() {
		t.Fatalf("loaded %s, saved %s", back.Address().Hex(), k.Address().Hex())
	}
	// go-ethereum reads the same file format.
	if priv, err := crypto.LoadECDSA(path); err != nil || crypto.PubkeyToAddress(priv.PublicKey) != k.Address() {
		t.Errorf("crypto.LoadECDSA: %v", err)
	}
	// Never overwrite an identity.
	other, _ := GenerateKey()
	if err := other.Save(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("overwrite: %v, want fs.ErrExist", err)
	}
	if again, _ := LoadKey(path); again == nil || again.Address() != k.Address() {
		t.Error("failed save clobbered the existing key")
	}
	// Missing directory: error, no file.
	if err := k.Save(filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Error("save into a missing directory succeeded")
	}
}

func TestParseKey(t *testing.T) {
	const hexKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	for _, s := range []string{hexKey, "0x" + hexKey, "  0x" + strings.ToUpper(hexKey) + "\n"} {
		k, err := ParseKey(s)
		if err != nil || k.Address().Hex() != "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23" {
			t.Errorf("ParseKey(%q) = %v, %v", s, k, err)
		}
	}
	for _, s := range []string{"", hexKey[:62], hexKey + "00", "zz" + hexKey[2:], strings.Repeat("0", 64),
		"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"} { // zero and n are not keys
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("a", 2000)), 0o600)
	if _, err := LoadKey(big); err == nil {
		t.Error("LoadKey accepted a 2000-byte file")
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestKeyDoesNotPrintSecret(t *testing.T) {
	k, err := ParseKey("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, k)
		if strings.Contains(strings.ToLower(out), "4c0883a6") || !strings.Contains(out, "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23") {
			t.Errorf("%s prints %q", verb, out)
		}
	}
}
