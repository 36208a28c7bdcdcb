package hookhttp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the raw
// request body under the shared webhook secret.
const SignatureHeader = "X-Notion-Signature"

// Sign returns the SignatureHeader value for body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header is the signature of body under secret. The
// comparison takes the same time whatever the header holds, so it leaks
// nothing about the expected value.
func Verify(secret, body []byte, header string) bool {
	got, err := hex.DecodeString(strings.TrimPrefix(header, "sha256="))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
