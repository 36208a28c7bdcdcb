package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// signatureHeader carries "sha256=" and the hex HMAC-SHA256 of the raw
// request body under the shared webhook secret.
const signatureHeader = "X-Notion-Signature"

// sign returns the signatureHeader value for body under secret.
func sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// validSignature reports whether header is the signature of body under
// secret. The comparison takes the same time whatever the header holds, so
// it leaks nothing about the expected value.
func validSignature(secret, body []byte, header string) bool {
	got, err := hex.DecodeString(strings.TrimPrefix(header, "sha256="))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
