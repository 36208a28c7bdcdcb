package console

import (
	"net/http"
	"net/url"

	"github.com/pacerkit/pacer/store"
)

// keyBody is the page of a key.
type keyBody struct {
	Queue     string
	QueueHref string
	Key       keyText
	Found     bool // the key holds values or is paused
	Info      store.KeyInfo
	State     string
	Since     moment
	Until     moment
	Oldest    moment
	Explain   string
	ExplainEr string
	Values    []valueRow
	More      int // values not shown
	Actions   []button
	Inspect   bool
}

// valueRow is one value of a key.
type valueRow struct {
	N     int
	Added moment
	Value valueText
}

// key serves a key's page: Inspector.Key, Inspector.Values (the first
// valuesPerKey) and the explanation.
func (q *request) key() {
	ctx := q.r.Context()
	form := q.r.URL.Query()
	if !form.Has("queue") || !form.Has("key") {
		q.fail(http.StatusBadRequest, "Which key? The address lacks its queue or key parameter.")
		return
	}
	name, key := form.Get("queue"), form.Get("key")
	queueHref := q.link("queue", url.Values{"queue": {name}})
	kt := q.c.formatKey(name, key, keyShown)
	short := q.c.formatKey(name, key, 40)
	p := q.newPage(short.Text+" · "+name,
		crumb{Text: "Queues", Href: q.base}, crumb{Text: name, Href: queueHref}, crumb{Text: short.Text})
	body := keyBody{Queue: name, QueueHref: queueHref, Key: kt, Inspect: q.c.insp != nil}

	if q.c.insp == nil {
		p.Notes = append(p.Notes, capabilityNote("Inspector", "the key's state and values cannot be read"))
	} else {
		info, ok, err := q.c.insp.Key(ctx, name, key)
		if err != nil {
			q.storeFailed("Key", err)
			return
		}
		body.Found, body.Info = ok, info
		if ok {
			body.State = info.State.String()
			body.Since, body.Until, body.Oldest = p.When(info.Since), p.When(info.Until), p.When(info.Oldest)
			vals, err := q.c.insp.Values(ctx, name, key, valuesPerKey)
			if err != nil {
				q.storeFailed("Values", err)
				return
			}
			for i, v := range vals {
				body.Values = append(body.Values, valueRow{N: i + 1, Added: p.When(v.Added), Value: q.c.formatValue(name, v.Value)})
			}
			body.More = max(0, info.Values-len(vals))
		}
	}
	if ex, err := q.c.explain(ctx, name, key); err != nil {
		body.ExplainEr = err.Error()
	} else {
		body.Explain = ex
	}
	body.Actions = q.keyActions(name, key, body)
	p.Body = body
	q.render(http.StatusOK, "key", p)
}

// keyActions are the buttons that fit what the key is doing.
func (q *request) keyActions(queue, key string, b keyBody) []button {
	var as []Action
	if q.c.op != nil {
		if b.Info.Paused {
			as = append(as, Action{Kind: ResumeKey, Queue: queue, Key: key})
		} else {
			as = append(as, Action{Kind: PauseKey, Queue: queue, Key: key})
		}
		if b.Info.State == store.Retrying || b.Info.State == store.Deferred {
			as = append(as, Action{Kind: RetryNow, Queue: queue, Key: key})
		}
	}
	if b.Info.State == store.Held {
		as = append(as, Action{Kind: Release, Queue: queue, Key: key})
	}
	if q.c.op != nil && b.Info.Values > 0 {
		as = append(as, Action{Kind: DropKey, Queue: queue, Key: key})
	}
	return q.buttons(as...)
}
