// Command ntnsync mirrors Notion pages into Markdown files, fed by Notion's
// webhooks: each change goes to a durable on-disk queue before the webhook
// is answered, and a pacer.Runner syncs each page once its changes go
// quiet, under the page API's rate limit. A crash, kill -9 included, loses
// nothing. Without -api-url it plays a demo and checks it. See README.md.
package main

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) } // cli.go: the demo, or the sync for real

// openApp opens the sync on its directories (openDirs) and wires the
// Runner: the page id is its key, so each page is synced once its changes
// go quiet, one sync per page at a time. The pages still queued on disk go
// to the Runner before any webhook, so what a previous run accepted is
// synced first. The caller must call shutdown.
func openApp(cfg appConfig) (*app, error) {
	a, err := openDirs(cfg) // app.go: the queue's lock file, the queue, the mirror
	if err != nil {
		return nil, err
	}
	// One bucket paces the Runner's calls and the client's requests: each
	// call's request goes out on the token the Runner took for it, and a
	// 429 with Retry-After pauses both.
	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
	if err == nil {
		a.api = &client{base: cfg.APIURL, token: cfg.Token, hc: &http.Client{Transport: &ratelimit.Transport{Base: cfg.Base, Limiter: bucket}}}
		a.runner, err = pacer.New(pacer.Config[string, change]{
			Debounce: cfg.Debounce, // a page is synced once its changes go quiet...
			MaxWait:  cfg.MaxWait,  // ...and at least this often while they go on
			Workers:  max(cfg.Workers, 1),
			Retry:    cfg.Backoff, // forever: a failed page stays queued until it syncs
			Limiter:  bucket,
			OnEvent:  a.onEvent,
			OnDrop:   a.onDrop,
		}, a.syncPage)
	}
	if err != nil {
		return nil, errors.Join(err, a.unlock())
	}
	a.hook = &webhook{secret: cfg.Secret, q: a.q, log: a.log, notify: func(ctx context.Context, id string) error {
		return a.runner.Add(ctx, id, change{})
	}}
	items, err := a.q.list()
	for _, it := range items {
		if err == nil {
			err = a.runner.Add(context.Background(), it.PageID, change{})
		}
	}
	if err != nil {
		a.abandon()
		return nil, err
	}
	return a, nil
}

// syncPage is the Runner's handler: it syncs page id, whose changes are on
// disk in its queue item. The Runner calls it once the page's changes went
// quiet, never twice at once for one page, and retries it with backoff
// when it returns an error; the queue item stays on disk meanwhile.
//
// A crash between any two steps leaves the page file, the manifest and the
// queue in agreement, or in a state the next start repairs: the page file
// is replaced atomically, then the manifest, and only then is the queue
// item removed, if no newer change rewrote it meanwhile (that change added
// the page to the Runner again, which syncs it after this call).
func (a *app) syncPage(ctx context.Context, id string, _ []change) error {
	if a.halted.Load() {
		return errors.New("ntnsync: halted") // the demo's crash
	}
	it, err := a.q.read(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // an earlier call synced the change
	} else if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	a.counts.Fetches.Add(1)
	p, err := a.api.fetch(ctx, id)
	if se := (*statusError)(nil); errors.As(err, &se) && se.permanent() {
		a.log.Warn("dropping page", "page", id, "err", err)
		if _, err := a.q.ack(it); err != nil { // unless a newer change came
			return err
		}
		a.counts.Dropped.Add(1)
		return nil
	} else if err != nil {
		return err
	}
	if _, err := a.st.write(p, markdown(p), time.Now()); err != nil {
		return err
	}
	removed, err := a.q.ack(it)
	if err != nil {
		return err
	}
	if removed {
		a.counts.Synced.Add(1)
	} else {
		a.counts.Requeue.Add(1) // changed meanwhile: synced again after this call
	}
	a.log.Info("synced", "page", id, "version", p.Version, "updates", it.Updates)
	return nil
}

// run syncs pages until ctx ends or shutdown has drained the Runner.
func (a *app) run(ctx context.Context) error { return a.runner.Run(ctx) }

// shutdown stops intake, syncs every page still queued (retries included)
// and releases the queue directory. If ctx ends first, the pages not
// synced stay queued on disk for the next start, and shutdown returns an
// error that wraps ctx.Err().
func (a *app) shutdown(ctx context.Context) error {
	a.hook.stop()
	return errors.Join(a.runner.Shutdown(ctx), a.unlock())
}
