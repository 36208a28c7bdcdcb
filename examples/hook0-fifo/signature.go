package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// signatureHeader carries the HMAC of a delivery, as Hook0 sends it:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">". Binding the
// timestamp lets a receiver refuse replays of old deliveries.
const signatureHeader = "X-Hook0-Signature"

// sign returns the signature header value for body sent at t.
func sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// verify checks a signature header value against body in constant time.
func verify(secret []byte, header string, body []byte) bool {
	var ts, v1 string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	if ts == "" || v1 == "" {
		return false
	}
	return hmac.Equal([]byte(v1), []byte(mac(secret, ts, body)))
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
