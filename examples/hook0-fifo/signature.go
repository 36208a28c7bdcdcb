package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// signatureHeader carries the HMAC of a delivery, as Hook0 sends it:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">"; the timestamp
// lets a receiver refuse replays (signatureTolerance).
const signatureHeader = "X-Hook0-Signature"

// signatureTolerance is how far a signature's timestamp may be from the
// receiver's clock, either way, as Stripe and Svix allow by default.
const signatureTolerance = 5 * time.Minute

// Why verify refuses a signature.
var (
	errSignatureMalformed = errors.New("no signature of the form t=<unix seconds>,v1=<hex HMAC-SHA256>")
	errSignatureMismatch  = errors.New("signature does not match the body and timestamp")
	errSignatureTooOld    = errors.New("signature too old")
	errSignatureTooNew    = errors.New("signature from the future")
)

// sign returns the signature header value for body sent at t.
func sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// verify checks a signature header value against body in constant time,
// then, once it is proved genuine, its timestamp against now. Its error
// wraps one of the errSignature values.
func verify(secret []byte, header string, body []byte, now time.Time) error {
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
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || v1 == "" {
		return errSignatureMalformed
	}
	if !hmac.Equal([]byte(v1), []byte(mac(secret, ts, body))) {
		return errSignatureMismatch
	}
	switch age := now.Sub(time.Unix(sec, 0)); {
	case age > signatureTolerance:
		return fmt.Errorf("%w: signed %v before this receiver's clock, more than %v: refused as a possible replay", errSignatureTooOld, age, signatureTolerance)
	case age < -signatureTolerance:
		return fmt.Errorf("%w: signed %v after this receiver's clock, more than %v", errSignatureTooNew, -age, signatureTolerance)
	}
	return nil
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(append([]byte(ts+"."), body...))
	return hex.EncodeToString(m.Sum(nil))
}
