package console

import (
	"net/http"
	"net/url"

	"github.com/pacerkit/pacer/store"
)

// countsInline is the value of the "counts" parameter that asks a page
// for its counts read before it is sent, for a browser without scripts.
const countsInline = "inline"

// countsPanel is the panel of a queue's counts. The counts may visit
// every key of the queue (Store.Stats on pgstore and store.Memory), so a
// queue's page is sent with the panel empty and its script fills it from
// Src; Inline is the same page with the counts read before it is sent.
type countsPanel struct {
	Stats  *store.Stats // nil while the counts are loading
	Src    string       // the counts' address, which the page's script loads
	Inline string       // the page with its counts, for a browser without scripts
	Dead   string       // the dead letters' page
	Err    string       // why the counts could not be read
}

// queueCounts serves the panel of a queue's counts alone ("counts?queue=Q"):
// one Store.Stats, which the page of the queue loads after it shows.
func (q *request) queueCounts() {
	form := q.r.URL.Query()
	if !form.Has("queue") {
		q.fail(http.StatusBadRequest, "Which queue? The address lacks its queue parameter.")
		return
	}
	name := form.Get("queue")
	panel := countsPanel{Dead: q.link("dead", url.Values{"queue": {name}})}
	status := http.StatusOK
	stats, err := q.c.st.Stats(q.r.Context(), name)
	if err != nil {
		status = http.StatusBadGateway
		panel.Err = "The store's Stats failed: " + err.Error()
	} else {
		panel.Stats = &stats
	}
	q.execute(status, "queue", "counts", panel)
}
