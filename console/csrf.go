package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
)

// csrfCookie holds a random nonce of the operator's browser; a form's
// token is the HMAC of that nonce under the console's key. A site that
// makes the browser POST to the console can neither read the cookie nor
// compute the token, and a token copied from one browser does not work
// with another's cookie.
const csrfCookie = "pacer_console_csrf"

// csrfField is the form field that carries the token.
const csrfField = "csrf"

// csrf makes and checks the tokens of the action forms.
type csrf struct {
	key []byte
}

// sign returns the token of nonce.
func (c csrf) sign(nonce string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// token returns the token for the forms of a page, setting the cookie
// when the browser has none yet.
func (q *request) token() string {
	if ck, err := q.r.Cookie(csrfCookie); err == nil && validNonce(ck.Value) {
		return q.c.csrf.sign(ck.Value)
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	nonce := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(q.w, &http.Cookie{
		Name:     csrfCookie,
		Value:    nonce,
		Path:     q.base,
		HttpOnly: true,
		Secure:   q.r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return q.c.csrf.sign(nonce)
}

// validNonce reports whether s looks like a nonce the console made.
func validNonce(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 32
}

var (
	errNoCSRFCookie = errors.New("the form's cookie is missing: reload the page and try again")
	errBadCSRFToken = errors.New("the form's token does not match its cookie: reload the page and try again")
)

// checkToken checks the token of a POSTed form against the cookie.
func (q *request) checkToken() error {
	ck, err := q.r.Cookie(csrfCookie)
	if err != nil || !validNonce(ck.Value) {
		return errNoCSRFCookie
	}
	want := q.c.csrf.sign(ck.Value)
	if !hmac.Equal([]byte(q.r.PostFormValue(csrfField)), []byte(want)) {
		return errBadCSRFToken
	}
	return nil
}
