package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// button is an action a page offers: a link to its confirmation.
type button struct {
	Kind   ActionKind
	Text   string
	Href   string
	Danger bool // it removes or moves values
}

// buttons returns the buttons of as, none when the console is read-only.
func (q *request) buttons(as ...Action) []button {
	if q.c.readOnly() {
		return nil
	}
	bs := make([]button, 0, len(as))
	for _, a := range as {
		bs = append(bs, button{
			Kind:   a.Kind,
			Text:   a.Kind.verb(),
			Href:   q.link("confirm", a.values()),
			Danger: a.Kind == DropKey || a.Kind == Purge,
		})
	}
	return bs
}

// values encodes a's target as query parameters: the confirmation page
// and the form it POSTs carry the target in their address, where any
// bytes of a key survive escaped.
func (a Action) values() url.Values {
	v := url.Values{"do": {string(a.Kind)}, "queue": {a.Queue}}
	switch {
	case a.Kind.hasKey():
		v.Set("key", a.Key)
	case a.Kind == Redrive:
		v.Set("id", strconv.FormatUint(a.DeadLetter, 10))
	}
	return v
}

// parseAction reads an action's target from v, as values wrote it.
func parseAction(v url.Values) (Action, error) {
	a := Action{Kind: ActionKind(v.Get("do")), Queue: v.Get("queue"), Key: v.Get("key")}
	if !a.Kind.known() {
		return Action{}, fmt.Errorf("no action is called %q", v.Get("do"))
	}
	if !v.Has("queue") {
		return Action{}, errors.New("the action names no queue")
	}
	if a.Kind.hasKey() && !v.Has("key") {
		return Action{}, errors.New("the action names no key")
	}
	if a.Kind == Redrive {
		id, err := strconv.ParseUint(v.Get("id"), 10, 64)
		if err != nil {
			return Action{}, errors.New("the action names no dead letter")
		}
		a.DeadLetter = id
	}
	return a, nil
}

// defaultPurgeAge is the age the purge form proposes.
const defaultPurgeAge = "7d"

// parseAge reads a duration as time.ParseDuration does, and also in
// whole days ("7d").
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 && d <= 100000 {
			return time.Duration(d) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age such as 90m, 24h or 7d", s)
	}
	return d, nil
}

// formatAge writes d as parseAge reads it: in days when it is whole
// days, and without the zero units of time.Duration.String otherwise.
func formatAge(d time.Duration) string {
	day := 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// confirmBody is the page that asks before an action.
type confirmBody struct {
	Action   Action
	Verb     string
	Question string
	Key      keyText
	Post     string // where the form POSTs
	Back     string
	Token    string
	Danger   bool
	HasKey   bool
	Age      string // Purge's proposed age
	Reason   string // DropKey's proposed reason
}

// confirm serves the confirmation of an action: a form that POSTs it.
// It reads nothing from the store.
func (q *request) confirm() {
	if q.c.readOnly() {
		q.fail(http.StatusForbidden, "This console is read-only: it takes no actions.")
		return
	}
	a, err := parseAction(q.r.URL.Query())
	if err != nil {
		q.fail(http.StatusBadRequest, "The action is not one the console knows: "+err.Error()+".")
		return
	}
	back := q.back(a)
	p := q.newPage(a.Kind.verb(), crumb{Text: "Queues", Href: q.base}, crumb{Text: a.Queue, Href: q.link("queue", url.Values{"queue": {a.Queue}})}, crumb{Text: "Confirm"})
	body := confirmBody{
		Action:   a,
		Verb:     a.Kind.verb(),
		Question: question(a),
		Post:     q.link("act", a.values()),
		Back:     back,
		Token:    q.token(),
		Danger:   a.Kind == DropKey || a.Kind == Purge,
	}
	if a.Kind.hasKey() {
		body.HasKey = true
		body.Key = q.c.formatKey(a.Queue, a.Key, keyShown)
	}
	if a.Kind == Purge {
		body.Age = defaultPurgeAge
	}
	if a.Kind == DropKey {
		body.Reason = "dropped from the console"
	}
	p.Body = body
	q.render(http.StatusOK, "confirm", p)
}

// question says what an action will do, for its confirmation.
func question(a Action) string {
	switch a.Kind {
	case PauseQueue:
		return "No process will lease this queue's keys until it is resumed. Leases already out run on."
	case ResumeQueue:
		return "Every process may lease this queue's keys again."
	case PauseKey:
		return "No process will lease this key until it is resumed, whatever it holds meanwhile. A lease already out runs on."
	case ResumeKey:
		return "The key goes back to what its values are doing."
	case RetryNow:
		return "The key becomes ready now, with its batch and attempts as they are."
	case Release:
		return "The held key goes back to the ready order, with its attempts started over."
	case DropKey:
		return "All of the key's values move to one dead letter, and its lease, if one is out, ends."
	case Redrive:
		return fmt.Sprintf("The values of dead letter %d go back to the tail of their key, ready at once.", a.DeadLetter)
	case Purge:
		return "The dead letters of this queue dropped before the age below are removed for good."
	}
	return ""
}

// back is the page an action returns to.
func (q *request) back(a Action) string {
	switch {
	case a.Kind.hasKey():
		return q.link("key", url.Values{"queue": {a.Queue}, "key": {a.Key}})
	case a.Kind == Redrive || a.Kind == Purge:
		return q.link("dead", url.Values{"queue": {a.Queue}})
	}
	return q.link("queue", url.Values{"queue": {a.Queue}})
}

// maxForm bounds the body of an action's POST: a token, a reason, an age.
const maxForm = 64 << 10

// act does an action POSTed by a confirmation form, after the checks:
// same-origin (Sec-Fetch-Site or Origin), the form's token against its
// cookie, then Config.Authorize. It redirects to the page the action
// returns to, with a flash message.
func (q *request) act() {
	if err := q.c.origin.Check(q.r); err != nil {
		q.fail(http.StatusForbidden, "The action came from another site: refused.")
		return
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxForm)
	if err := q.r.ParseForm(); err != nil {
		q.fail(http.StatusBadRequest, "The form could not be read: "+err.Error()+".")
		return
	}
	if err := q.checkToken(); err != nil {
		q.fail(http.StatusForbidden, "Refused: "+err.Error()+".")
		return
	}
	a, err := parseAction(q.r.URL.Query())
	if err != nil {
		q.fail(http.StatusBadRequest, "The action is not one the console knows: "+err.Error()+".")
		return
	}
	switch a.Kind {
	case Purge:
		if a.Older, err = parseAge(q.r.PostForm.Get("older")); err != nil {
			q.fail(http.StatusBadRequest, "Purge: "+err.Error()+".")
			return
		}
	case DropKey:
		a.Reason = strings.TrimSpace(q.r.PostForm.Get("reason"))
	}
	if q.c.readOnly() {
		q.fail(http.StatusForbidden, "This console is read-only: it takes no actions.")
		return
	}
	if err := q.c.authorize(q.r, a); err != nil {
		q.fail(http.StatusForbidden, "Not allowed: "+err.Error())
		return
	}
	text, err := q.do(a)
	if err != nil {
		q.setFlash(flash{Kind: "error", Text: err.Error()})
	} else {
		q.setFlash(flash{Kind: "ok", Text: text})
	}
	http.Redirect(q.w, q.r, q.back(a), http.StatusSeeOther)
}
