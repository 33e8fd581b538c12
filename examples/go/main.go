// Command smpref-vectors checks smpref's signed test vectors from Go, with the standard library
// only: the MANIFEST signature (a C2SP signed note), the SHA-256 of every file it lists, and
// three vector sets recomputed from scratch: hkdf.json (HKDF-SHA512 and HKDF-SHA256),
// auth.json's Ed25519 signature tests, and block.json's padding tests.
//
// Usage: go run . PATH/TO/vectors
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
)

// The published verifier key of the vectors (vectors/README.md).
const keyName = "smpref.vectors/2026-1"
const publicKeyHex = "07363494b267ab52d4a2c1bd2f4eede62e5798daf3db4486a8c820c00c18c75c"

type vectorFile struct {
	NumberOfTests int `json:"numberOfTests"`
	TestGroups    []struct {
		Type  string            `json:"type"`
		Hash  string            `json:"hash"`
		Tests []json.RawMessage `json:"tests"`
	} `json:"testGroups"`
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		fail("bad hex %q: %v", s, err)
	}
	return b
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// verifyManifest checks the signed note and returns the file -> SHA-256 lines of its text.
func verifyManifest(dir string) map[string]string {
	raw, err := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		fail("%v", err)
	}
	note := string(raw)
	cut := strings.Index(note, "\n\n")
	if cut < 0 {
		fail("MANIFEST has no signature")
	}
	text := note[:cut+1] // the signed text ends with its last newline
	pub := ed25519.PublicKey(unhex(publicKeyHex))
	id := sha256.Sum256(append([]byte(keyName+"\n\x01"), pub...))
	verified := false
	for _, line := range strings.Split(note[cut+2:], "\n") {
		parts := strings.Split(line, " ")
		if len(parts) != 3 || parts[0] != "\u2014" || parts[1] != keyName {
			continue
		}
		blob, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil || len(blob) != 68 || !bytes.Equal(blob[:4], id[:4]) {
			continue
		}
		if !ed25519.Verify(pub, []byte(text), blob[4:]) {
			fail("the MANIFEST signature does not verify")
		}
		verified = true
	}
	if !verified {
		fail("no signature by %s in MANIFEST", keyName)
	}
	hashes := map[string]string{}
	for _, line := range strings.Split(text, "\n")[2:] { // after "smpref test vectors", "format 1"
		if f := strings.Fields(line); len(f) == 2 {
			hashes[f[1]] = f[0]
		}
	}
	return hashes
}

// hkdf is RFC 5869: extract, then expand.
func hkdf(newHash func() hash.Hash, salt, ikm, info []byte, size int) []byte {
	if len(salt) == 0 {
		salt = make([]byte, newHash().Size())
	}
	extract := hmac.New(newHash, salt)
	extract.Write(ikm)
	prk := extract.Sum(nil)
	var okm, block []byte
	for counter := byte(1); len(okm) < size; counter++ {
		expand := hmac.New(newHash, prk)
		expand.Write(block)
		expand.Write(info)
		expand.Write([]byte{counter})
		block = expand.Sum(nil)
		okm = append(okm, block...)
	}
	return okm[:size]
}

func checkHKDF(v vectorFile) int {
	checked := 0
	for _, g := range v.TestGroups {
		newHash := sha512.New
		if g.Hash == "SHA-256" {
			newHash = sha256.New
		}
		for _, raw := range g.Tests {
			var t struct {
				TcID                         int
				Salt, Ikm, Info, Okm, Result string
				Size                         int
			}
			json.Unmarshal(raw, &t)
			got := hex.EncodeToString(hkdf(newHash, unhex(t.Salt), unhex(t.Ikm), unhex(t.Info), t.Size))
			if (got == t.Okm) != (t.Result == "valid") {
				fail("hkdf.json tcId %d: got %s", t.TcID, got)
			}
			checked++
		}
	}
	return checked
}

// shortString is SMP's ss(x): one length byte, then the bytes (spec/encoding.md, ENC-1).
func shortString(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }

// checkSignatures checks RFC 8032's known answers over their message, and each transmission test
// over the authorized bytes built here: ss(sessionId) || ss(corrId) || ss(entityId) || command
// (TRANS-6), so that a wrong session, key or signature must make Verify fail.
func checkSignatures(v vectorFile) int {
	checked := 0
	for _, g := range v.TestGroups {
		if g.Type != "SignatureTest" {
			continue // the X25519 authenticators and credential rules need more than the stdlib
		}
		for _, raw := range g.Tests {
			var t struct {
				TcID                                  int
				VerifyKey, Message, Signature, Result string
				SessionID                             string `json:"sessionId"`
				CorrID                                string `json:"corrId"`
				EntityID                              string `json:"entityId"`
				Command, Authorized                   string
			}
			json.Unmarshal(raw, &t)
			signed := unhex(t.Message)
			if t.Command != "" {
				signed = append(shortString(unhex(t.SessionID)), shortString(unhex(t.CorrID))...)
				signed = append(signed, shortString(unhex(t.EntityID))...)
				signed = append(signed, unhex(t.Command)...)
				if t.Result == "valid" && hex.EncodeToString(signed) != t.Authorized {
					fail("auth.json tcId %d: authorized bytes differ", t.TcID)
				}
			}
			ok := ed25519.Verify(ed25519.PublicKey(unhex(t.VerifyKey)), signed, unhex(t.Signature))
			if ok != (t.Result == "valid") {
				fail("auth.json tcId %d: Verify says %v, the vector says %s", t.TcID, ok, t.Result)
			}
			checked++
		}
	}
	return checked
}

// pad is ENC-1: a 2-byte big-endian length, the content, then '#' up to the padded size.
func pad(content []byte, size int) []byte {
	out := binary.BigEndian.AppendUint16(nil, uint16(len(content)))
	out = append(out, content...)
	return append(out, bytes.Repeat([]byte("#"), size-len(out))...)
}

func checkPadding(v vectorFile) int {
	checked := 0
	for _, g := range v.TestGroups {
		if g.Type != "PadTest" {
			continue
		}
		for _, raw := range g.Tests {
			var t struct {
				TcID                    int
				Content, Padded, Result string
				PaddedSize              int
			}
			json.Unmarshal(raw, &t)
			if got := hex.EncodeToString(pad(unhex(t.Content), t.PaddedSize)); got != t.Padded {
				fail("block.json tcId %d: padded to %s", t.TcID, got)
			}
			checked++
		}
	}
	return checked
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . PATH/TO/vectors")
		os.Exit(2)
	}
	dir := os.Args[1]
	hashes := verifyManifest(dir)
	for name, want := range hashes {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			fail("%v", err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != want {
			fail("%s: SHA-256 does not match MANIFEST", name)
		}
	}
	fmt.Printf("MANIFEST: signature ok, %d files hashed\n", len(hashes))
	checks := map[string]func(vectorFile) int{
		"hkdf.json": checkHKDF, "auth.json": checkSignatures, "block.json": checkPadding,
	}
	for _, name := range []string{"hkdf.json", "auth.json", "block.json"} {
		raw, _ := os.ReadFile(filepath.Join(dir, name))
		var v vectorFile
		if err := json.Unmarshal(raw, &v); err != nil {
			fail("%s: %v", name, err)
		}
		fmt.Printf("%s: %d of %d tests checked\n", name, checks[name](v), v.NumberOfTests)
	}
}
