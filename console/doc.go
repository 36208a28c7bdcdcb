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
// Each page reads a bounded part of the store, whatever the store holds:
//
//   - Queues (the overview, at the prefix): one store.Inspector.Queues,
//     plus a Store.Stats for each Runner's queue that Queues does not list.
//     Its table refreshes every 3 seconds while the tab is visible, from
//     the rows alone ("queues", the same calls).
//   - A queue ("queue?queue=Q"): one Store.Stats and one Inspector.Keys of
//     at most 100 keys (50 unless the address asks), filtered by state and
//     key prefix, paged by the engine's cursor.
//   - A key ("key?queue=Q&key=K"): Inspector.Key, Inspector.Values of the
//     first 20 values, and the explanation: the Runner's RunnerView.Explain
//     for a Runner's queue, pacer.ExplainStored for any other; both read
//     Inspector.Key and store.Operator's QueuePaused (Store.Stats from a
//     store that is no Operator).
//   - Dead letters ("dead?queue=Q"): one DeadLetters.DeadLetters of 50,
//     after the ID in the address; each shows its first 3 values.
//   - A confirmation ("confirm?do=…"): no store call.
//
// The cost of these calls is the engine's: the shared engines read O(the
// page) entries of their indexes for Keys, Key, Values and DeadLetters;
// redisstore counts a queue (Stats, and Queues for each queue) in O(log n)
// of its keys, while pgstore's and store.Memory's counts visit every key
// of the queue, as do Memory's Keys (O(n log Limit)) and Key (O(n)). The
// console's own work is O(the page). BENCHMARKS.md times every page over
// each engine holding a queue of 10^6 keys.
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
