// Command quickstart is the smallest useful pacer program: a webhook takes
// edits in, and a Runner hands them out to a handler, all of a user's edits
// in one call once that user has gone quiet, at most two calls a second for
// all users together. It posts a few edits to itself, then shuts down.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// newRunner is the way out: the handler gets a user's edits since its
// last call, once the user has been quiet for 300 ms.
func newRunner(out io.Writer) (*pacer.Runner[string, string], error) {
	start := time.Now()
	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 2}) // 2 a second, burst 1
	if err != nil {
		return nil, err
	}
	return pacer.New(pacer.Config[string, string]{
		Debounce: 300 * time.Millisecond, // a user's edits have gone quiet...
		MaxWait:  time.Second,            // ...or the first has waited a second
		Limiter:  bucket,                 // a token per handler call, all users together
	}, func(ctx context.Context, user string, edits []string) error {
		fmt.Fprintf(out, "%6v  %s: %q\n", time.Since(start).Round(100*time.Millisecond), user, edits)
		return nil // an error would retry the batch, with backoff
	})
}

// webhook is the way in: POST /edits/{user} adds the body under the user
// and answers 202, or 503 once the Runner is shutting down.
func webhook(r *pacer.Runner[string, string]) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /edits/{user}", func(w http.ResponseWriter, req *http.Request) {
		edit, _ := io.ReadAll(io.LimitReader(req.Body, 1<<10))
		if err := r.Add(req.Context(), req.PathValue("user"), string(edit)); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	return mux
}

func main() {
	r, err := newRunner(os.Stdout)
	check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: webhook(r)}
	go srv.Serve(ln)

	// A server runs until it is told to stop; this one, for 2 seconds.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	go r.Run(ctx)
	for _, e := range edits { // as a sender of webhooks would
		resp, err := http.Post("http://"+ln.Addr().String()+"/edits/"+e[0], "text/plain", strings.NewReader(e[1]))
		check(err)
		resp.Body.Close()
		fmt.Printf("POST /edits/%s %q: %s\n", e[0], e[1], resp.Status)
	}
	<-ctx.Done()

	// Stop taking webhooks, then let the Runner handle what it accepted.
	shutdown, cancelShutdown := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelShutdown()
	check(srv.Shutdown(shutdown))
	check(r.Shutdown(shutdown))
}

// edits are the webhooks main sends itself: user and edit.
var edits = [][2]string{{"bob", "due date"}, {"alice", "title"}, {"alice", "priority"}, {"carol", "estimate"}, {"alice", "title again"}}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
