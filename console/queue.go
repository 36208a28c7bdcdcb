package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pacerkit/pacer/store"
)

// Page sizes: the most entries a page reads from the store.
const (
	keysPerPage    = 50  // Inspector.Keys Limit, unless the request asks for fewer or more
	maxKeysPerPage = 100 // the most a request may ask for
	valuesPerKey   = 20  // Inspector.Values limit on a key's page
	deadPerPage    = 50  // DeadLetters limit
)

// states are the filters of the keys' page, in the order of a key's life.
var states = []store.KeyState{store.Scheduled, store.Debouncing, store.Ready, store.Leased, store.Retrying, store.Deferred, store.Held}

// queueBody is the page of a queue: its counts, actions and a page of keys.
type queueBody struct {
	Queue   string
	Runner  bool
	Stats   store.Stats
	Actions []button
	// Filter
	States []stateOption
	Prefix string
	Limit  int
	// The page of keys
	Inspect  bool // the store implements Inspector
	Keys     []keyRow
	Next     string // the next page's address
	First    string // the first page's address, on later pages
	Filtered bool   // a state or prefix filter is set
	Dead     string // the dead letters' page
}

// stateOption is an option of the state filter.
type stateOption struct {
	Value    string
	Selected bool
}

// keyRow is a key in a page of keys.
type keyRow struct {
	Key     keyText
	Href    string
	Info    store.KeyInfo
	State   string
	Since   moment
	Until   moment
	Oldest  moment
	ErrText string
}

// queue serves a queue's page: Store.Stats and one Inspector.Keys.
func (q *request) queue() {
	ctx := q.r.Context()
	form := q.r.URL.Query()
	name := form.Get("queue")
	if !form.Has("queue") {
		q.fail(http.StatusBadRequest, "Which queue? The address lacks its queue parameter.")
		return
	}
	state, ok := parseState(form.Get("state"))
	if !ok {
		q.fail(http.StatusBadRequest, "No key is in state "+strconv.Quote(form.Get("state"))+".")
		return
	}
	stats, err := q.c.st.Stats(ctx, name)
	if err != nil {
		q.storeFailed("Stats", err)
		return
	}
	p := q.newPage(name, crumb{Text: "Queues", Href: q.base}, crumb{Text: name})
	_, runner := q.c.runners[name]
	body := queueBody{Queue: name, Runner: runner, Stats: stats, Inspect: q.c.insp != nil,
		Dead: q.link("dead", url.Values{"queue": {name}})}
	if stats.Paused {
		body.Actions = q.buttons(Action{Kind: ResumeQueue, Queue: name})
	} else {
		body.Actions = q.buttons(Action{Kind: PauseQueue, Queue: name})
	}

	body.States = append(body.States, stateOption{Value: "", Selected: state == 0})
	for _, s := range states {
		body.States = append(body.States, stateOption{Value: s.String(), Selected: s == state})
	}
	body.Prefix = form.Get("prefix")
	body.Filtered = state != 0 || body.Prefix != ""
	body.Limit = keysPerPage
	if n, err := strconv.Atoi(form.Get("limit")); err == nil && n > 0 {
		body.Limit = min(n, maxKeysPerPage)
	}

	if q.c.insp == nil {
		p.Notes = append(p.Notes, capabilityNote("Inspector", "its keys cannot be listed"))
	} else {
		kq := store.KeyQuery{State: state, Prefix: body.Prefix, Cursor: form.Get("cursor"), Limit: body.Limit}
		kp, err := q.c.insp.Keys(ctx, name, kq)
		if err != nil {
			q.storeFailed("Keys", err)
			return
		}
		for _, info := range kp.Keys {
			body.Keys = append(body.Keys, keyRow{
				Key:     q.c.formatKey(name, info.Key, keyShownInTable),
				Href:    q.link("key", url.Values{"queue": {name}, "key": {info.Key}}),
				Info:    info,
				State:   info.State.String(),
				Since:   p.When(info.Since),
				Until:   p.When(info.Until),
				Oldest:  p.When(info.Oldest),
				ErrText: firstLine(info.Err, 160),
			})
		}
		page := url.Values{"queue": {name}}
		if state != 0 {
			page.Set("state", state.String())
		}
		if body.Prefix != "" {
			page.Set("prefix", body.Prefix)
		}
		if body.Limit != keysPerPage {
			page.Set("limit", strconv.Itoa(body.Limit))
		}
		if kq.Cursor != "" {
			body.First = q.link("queue", page)
		}
		if kp.Next != "" {
			page.Set("cursor", kp.Next)
			body.Next = q.link("queue", page)
		}
	}
	if q.c.op == nil {
		p.Notes = append(p.Notes, capabilityNote("Operator", "it cannot be paused"))
		body.Actions = nil
	}
	p.Body = body
	q.render(http.StatusOK, "queue", p)
}

// parseState reads a state filter by name; "" is every state.
func parseState(s string) (store.KeyState, bool) {
	if s == "" {
		return 0, true
	}
	for _, st := range states {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// firstLine returns s up to its first line break, cut to n runes.
func firstLine(s string, n int) string {
	for i, r := range s {
		if r == '\n' || r == '\r' {
			s = s[:i] + " …"
			break
		}
	}
	if t, cut := cutRunes(s, n); cut {
		return t + "…"
	}
	return s
}
