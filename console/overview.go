package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/pacerkit/pacer/store"
)

// overviewBody is the overview: a row per queue.
type overviewBody struct {
	Rows []queueRow
	Err  string // why the rows could not be read
}

// queueRow is one queue of the overview.
type queueRow struct {
	Name   string
	Href   string
	Dead   string // the dead letters' page
	Runner bool
	Stats  store.Stats
	Oldest moment
}

// overview serves the list of queues.
func (q *request) overview() {
	p := q.newPage("Queues")
	p.Live = q.link("queues", nil)
	if q.c.insp == nil {
		p.Notes = append(p.Notes, capabilityNote("Inspector", "only the queues of the console's Runners are listed"))
	}
	p.Body = q.overviewBody(p)
	q.render(http.StatusOK, "overview", p)
}

// overviewRows serves the rows of the overview alone, which the page's
// script fetches to refresh itself.
func (q *request) overviewRows() {
	p := &page{Base: q.base, Now: q.c.now(), ReadOnly: q.c.readOnly()}
	p.Body = q.overviewBody(p)
	q.execute(http.StatusOK, "overview", "rows", p)
}

// overviewBody reads the queues: Inspector.Queues, plus Stats for each
// Runner's queue that Queues does not list (one that holds nothing,
// or every one when the store has no Inspector).
func (q *request) overviewBody(p *page) overviewBody {
	ctx := q.r.Context()
	var body overviewBody
	var infos []store.QueueInfo
	if q.c.insp != nil {
		var err error
		infos, err = q.c.insp.Queues(ctx)
		if err != nil {
			body.Err = "The store's Queues failed: " + err.Error()
		}
	}
	listed := make(map[string]bool, len(infos))
	for _, in := range infos {
		listed[in.Name] = true
	}
	for _, name := range q.c.queues {
		if listed[name] {
			continue
		}
		st, err := q.c.st.Stats(ctx, name)
		if err != nil {
			body.Err = "The store's Stats failed: " + err.Error()
			continue
		}
		infos = append(infos, store.QueueInfo{Name: name, Stats: st})
	}
	slices.SortFunc(infos, func(a, b store.QueueInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for _, in := range infos {
		_, runner := q.c.runners[in.Name]
		body.Rows = append(body.Rows, queueRow{
			Name:   in.Name,
			Href:   q.link("queue", url.Values{"queue": {in.Name}}),
			Dead:   q.link("dead", url.Values{"queue": {in.Name}}),
			Runner: runner,
			Stats:  in.Stats,
			Oldest: p.When(in.Oldest),
		})
	}
	return body
}
