// Package console is a web console over a pacer store: an http.Handler
// that shows what the store holds and, when authorized, steers it. It is
// plain server-rendered HTML with its stylesheet and one small script
// embedded; it needs no build step and works behind any path prefix:
//
//	h, err := console.New(console.Config{
//		Store:     st,
//		Runners:   []pacer.RunnerView{runner.View()},
//		Authorize: func(r *http.Request, a console.Action) error { return checkAdmin(r) },
//	})
//	mux.Handle("/pacer/", http.StripPrefix("/pacer", h))
//
// # Pages
//
// Each page reads a bounded part of the store, whatever the store holds.
// The exact counts of a queue may visit every key of it (see below), so
// the pages that show counts are sent without them, and the console's
// script loads them from a fragment at once, into a place kept for them:
//
//   - Queues (the overview, at the prefix): no store call; its table of
//     queues is the fragment "queues": one store.Inspector.Queues, plus a
//     Store.Stats for each Runner's queue that Queues does not list. The
//     script loads it on load, then every 3 seconds while the tab is
//     visible. A browser without scripts is sent on (a <noscript>
//     refresh) to "?counts=inline", the overview with its table read
//     before it is sent, which refreshes itself every 10 seconds.
//   - A queue ("queue?queue=Q"): store.Operator's QueuePaused, for its
//     pause badge and button, and one Inspector.Keys of at most 100 keys
//     (50 unless the address asks), filtered by state and key prefix,
//     paged by the engine's cursor. Its panel of counts is the fragment
//     "counts?queue=Q", one Store.Stats, loaded once; without scripts the
//     panel links to the same page with "counts=inline", which reads the
//     Stats before it is sent.
//   - A key ("key?queue=Q&key=K"): Inspector.Key, Inspector.Values of the
//     first 20 values, and the explanation: the Runner's RunnerView.Explain
//     for a Runner's queue, pacer.ExplainStored for any other; both read
//     Inspector.Key and store.Operator's QueuePaused (Store.Stats from a
//     store that is no Operator). A ready key shows the keys ahead of it
//     and, in a queue with tenants, the tenants whose turn comes before
//     its tenant's (KeyInfo.TenantsAhead), in its facts and its sentence.
//   - Dead letters ("dead?queue=Q"): one DeadLetters.DeadLetters of 50,
//     after the ID in the address; each shows its first 3 values.
//   - A confirmation ("confirm?do=…"): no store call.
//
// The cost of these calls is the engine's; over a queue of n keys, for
// a page of L entries:
//
//	call                  redisstore      pgstore               store.Memory
//	Stats, Queues (each)  O(log n) *      O(n)                  O(n)
//	QueuePaused           O(1)            O(1)                  O(1)
//	Keys                  O(log n + L)    O(log n + L)          O(log n + L)
//	Key                   O(log n) *      O(log n + MaxAhead)   O(MaxAhead) **
//	Values, DeadLetters   O(log n + L)    O(log n + L)          O(L)
//
// (* Stats plus O(1) per held, delayed or paused key; Key, for a ready
// key's Ahead, plus O(1) per paused key. ** For a ready key's Ahead,
// plus the entries of Memory's schedule before the key that Claims pass
// over, superseded or of a key whose lease lapsed and that is not ready;
// O(1) for another key. In a queue with tenants, a ready key's
// TenantsAhead adds O(MaxAhead) on every engine, plus the tenants
// without a ready key that it passes over, as Claims do: see each
// engine's Key.) A page of Keys with a filter reads
// at most 2,000 keys on pgstore and Memory. So on every engine a page is
// sent after O(log n + the page) of reads (plus MaxAhead for a ready
// key); on pgstore and Memory the counts that the overview and a queue's
// page load then visit every key of the queue. The console's own work is O(the page). BENCHMARKS.md
// times every page and every fragment of counts over each engine
// holding a queue of 10^6 keys.
//
// Keys and queue names are any bytes: they travel in query parameters,
// escaped, never in path segments, and show as they are when they are
// printable UTF-8, quoted (as a Go string) otherwise. (The filter form of
// a queue page sends the queue's name as the browser reads it: a name
// that is not UTF-8 is filtered by editing the address.) Values show as
// the queue's Runner decodes them or else, raw, as indented JSON when
// they parse as JSON, as text when they are printable UTF-8, in hex
// otherwise; a page shows at most the first 4 KiB of a value. A
// trace-context frame in front of a stored value is not shown.
//
// # Actions
//
// Pause and resume a queue or a key, retry a key now, release a held key,
// drop a key's values to the dead letters (store.Operator and
// Store.Release), redrive a dead letter, and purge a queue's dead letters
// older than an age (store.DeadLetters). A page offers the actions that
// fit what it shows; each is a link to a confirmation page, whose form
// POSTs the action; the console then redirects to the page the action
// concerns (POST/redirect/GET) and shows there, once, what happened.
//
// An action is done only after these checks, in this order:
//
//   - same origin: http.CrossOriginProtection refuses a POST that the
//     browser says came from another site (Sec-Fetch-Site, or an Origin
//     that is not the Host);
//   - a token: the form carries an HMAC-SHA256, under Config.CSRFKey, of a
//     random nonce kept in an HttpOnly, SameSite=Strict cookie scoped to
//     the prefix; a POST whose token does not match its cookie is refused;
//   - Config.Authorize, with the request and the Action. Without one the
//     console is read-only: it shows no action and refuses every POST.
//
// Every page is sent with a Content-Security-Policy that allows only the
// console's own script and stylesheet and no framing (so that no other
// site can overlay a confirmation button), and with Cache-Control:
// no-store.
package console
