package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pacerkit/pacer/store"
)

// deadBody is the page of a queue's dead letters.
type deadBody struct {
	Queue     string
	QueueHref string
	Letters   []letterRow
	Next      string
	First     string
	Actions   []button
	Supported bool // the store implements DeadLetters
}

// letterRow is one dead letter.
type letterRow struct {
	Letter  store.DeadLetter
	Key     keyText
	KeyHref string
	At      moment
	Values  []valueText
	More    int // values not shown
	Actions []button
}

// lettersShown is how many values of a dead letter its row shows.
const lettersShown = 3

// deadLetters serves a queue's dead letters: one DeadLetters call of
// deadPerPage, after the ID in the address.
func (q *request) deadLetters() {
	ctx := q.r.Context()
	form := q.r.URL.Query()
	if !form.Has("queue") {
		q.fail(http.StatusBadRequest, "Which queue? The address lacks its queue parameter.")
		return
	}
	name := form.Get("queue")
	var after uint64
	if s := form.Get("after"); s != "" {
		var err error
		if after, err = strconv.ParseUint(s, 10, 64); err != nil {
			q.fail(http.StatusBadRequest, "The after parameter is not a dead letter's ID.")
			return
		}
	}
	queueHref := q.link("queue", url.Values{"queue": {name}})
	p := q.newPage("Dead letters · "+name,
		crumb{Text: "Queues", Href: q.base}, crumb{Text: name, Href: queueHref}, crumb{Text: "Dead letters"})
	body := deadBody{Queue: name, QueueHref: queueHref, Supported: q.c.dead != nil}
	if q.c.dead == nil {
		p.Notes = append(p.Notes, capabilityNote("DeadLetters", "it keeps no dead letters"))
		p.Body = body
		q.render(http.StatusOK, "dead", p)
		return
	}
	letters, err := q.c.dead.DeadLetters(ctx, name, after, deadPerPage)
	if err != nil {
		q.storeFailed("DeadLetters", err)
		return
	}
	for _, d := range letters {
		row := letterRow{
			Letter:  d,
			Key:     q.c.formatKey(name, d.Key, keyShownInTable),
			KeyHref: q.link("key", url.Values{"queue": {name}, "key": {d.Key}}),
			At:      p.When(d.At),
			More:    max(0, len(d.Values)-lettersShown),
			Actions: q.buttons(Action{Kind: Redrive, Queue: name, DeadLetter: d.ID}),
		}
		for _, v := range d.Values[:min(len(d.Values), lettersShown)] {
			row.Values = append(row.Values, q.c.formatValue(name, v))
		}
		body.Letters = append(body.Letters, row)
	}
	if after != 0 {
		body.First = q.link("dead", url.Values{"queue": {name}})
	}
	if len(letters) == deadPerPage {
		last := letters[len(letters)-1].ID
		body.Next = q.link("dead", url.Values{"queue": {name}, "after": {strconv.FormatUint(last, 10)}})
	}
	body.Actions = q.buttons(Action{Kind: Purge, Queue: name})
	p.Body = body
	q.render(http.StatusOK, "dead", p)
}
