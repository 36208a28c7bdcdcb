package console

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// flashCookie carries the message of an action to the page the action
// redirects to, which shows it once and clears it.
const flashCookie = "pacer_console_flash"

// flash is the message shown at the top of a page after an action.
type flash struct {
	Kind string // "ok" or "error"
	Text string
}

// maxFlash bounds the text of a flash message, which a cookie carries.
const maxFlash = 600

// setFlash keeps f for the next page.
func (q *request) setFlash(f flash) {
	if t, cut := cutBytes(f.Text, maxFlash); cut {
		f.Text = t + "…"
	}
	http.SetCookie(q.w, &http.Cookie{
		Name:     flashCookie,
		Value:    base64.RawURLEncoding.EncodeToString([]byte(f.Kind + ":" + f.Text)),
		Path:     q.base,
		MaxAge:   60,
		HttpOnly: true,
		Secure:   q.r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}

// takeFlash returns the message left for this page, if any, and clears
// it.
func (q *request) takeFlash() *flash {
	ck, err := q.r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(q.w, &http.Cookie{Name: flashCookie, Path: q.base, MaxAge: -1})
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil {
		return nil
	}
	kind, text, ok := strings.Cut(string(b), ":")
	if !ok || (kind != "ok" && kind != "error") {
		return nil
	}
	return &flash{Kind: kind, Text: text}
}
