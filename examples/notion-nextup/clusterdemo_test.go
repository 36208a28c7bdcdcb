package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// clusterConfig configures the multi-instance demo: several processes of
// this program share one Redis and one fake task API, and the webhook
// stream is spread over them.
type clusterConfig struct {
	Command   func(args ...string) *exec.Cmd // runs this program with args
	RedisURL  string
	Prefix    string // the run's Redis key prefix: fresh, its keys deleted at the end
	Instances int
	App       appConfig // Secret, Rate, Burst, Debounce, MaxWait, LeaseTTL and Workers of every instance
	Logs      io.Writer // when set, every instance's log is copied here
}

// inducedRetryAfter is the Retry-After of the 429 the fake API is told to
// answer once, whatever its budget: every instance must hold back for it.
const inducedRetryAfter = 3 * time.Second

// clusterJitter is how much later than its turn at the shared bucket a
// request may reach the fake API: the instances are processes that may
// wait for a core, on a machine that may be busy with other work.
const clusterJitter = 400 * time.Millisecond

// clusterUsers are the people of the multi-instance demo; each has two
// tasks, named after them.
var clusterUsers = []string{"alice", "bob", "carol", "dave", "erin", "frank"}

func clusterTasks() []Task {
	var out []Task
	for _, u := range clusterUsers {
		out = append(out,
			Task{ID: u + "-1", Assignee: u, Title: "Ship the thing", Priority: 1, Estimate: 1},
			Task{ID: u + "-2", Assignee: u, Title: "Write it up", Priority: 2, Estimate: 2})
	}
	return out
}

// A cluster is one run of the multi-instance demo.
type cluster struct {
	cfg   clusterConfig
	fake  *clusterAPI
	insts []*instance
	hc    *http.Client // posts webhooks and reads /stats

	mu       sync.Mutex
	seq      int               // events sent
	next     int               // the instance the next event goes to
	down     map[string]bool   // instances that stopped answering
	accepted map[string]string // event ID -> user, for events answered 202
	byInst   map[string]int    // events answered 202, per instance
	resent   int               // events sent again to another instance after one failed
	killed   *instance         // the instance killed with SIGKILL
	killedAt time.Time
	victim   string // the user whose run the kill interrupted
}

// runCluster plays the multi-instance scenario and returns what it saw:
// it starts the fake task API and cfg.Instances processes of the program
// on one Redis, sends a burst of edits spread over the instances, has the
// API answer one request 429 with a Retry-After, kills the instance that
// sends the first query after that pause with SIGKILL, sends a second
// burst to the instances left, waits until every event answered 202 was
// taken into account by a finished recompute, stops the instances left
// with SIGTERM and checks the outcome.
func runCluster(ctx context.Context, cfg clusterConfig) (*clusterReport, error) {
	start := time.Now()
	if len(cfg.App.Secret) == 0 {
		cfg.App.Secret = []byte("demo-secret")
	}
	c := &cluster{
		cfg:      cfg,
		fake:     &clusterAPI{fakeAPI: newFakeAPI(cfg.App.Rate, cfg.App.Burst, false, time.Now)},
		hc:       &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second},
		down:     make(map[string]bool),
		accepted: make(map[string]string),
		byInst:   make(map[string]int),
	}
	defer c.hc.CloseIdleConnections()
	// A request late by more than another one sent after it makes the
	// second look early to the API: allow for that, as a real API's limit
	// would.
	c.fake.allowSlack(clusterJitter)
	for _, t := range clusterTasks() {
		c.fake.put(t)
	}
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", c.fake)
	if err != nil {
		return nil, err
	}
	defer apiSrv.Shutdown(context.Background())
	rdb, err := dialRedis(ctx, cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	defer func() {
		if err := deletePrefix(context.Background(), rdb, cfg.Prefix); err != nil && cfg.Logs != nil {
			fmt.Fprintln(cfg.Logs, "cleaning up Redis:", err)
		}
	}()
	defer c.killAll()
	if err := c.start(ctx, apiSrv.URL()); err != nil {
		return nil, err
	}

	throttled := c.fake.throttleCall(5, inducedRetryAfter)
	if err := c.wave(ctx, 3, func(t *Task, round int) { t.Estimate = 1 + round }); err != nil {
		return nil, err
	}
	var inducedAt time.Time
	select {
	case inducedAt = <-throttled:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the induced 429: %w", ctx.Err())
	}
	// Once the pause is over, the instance that sends the next query dies
	// before it gets the answer: in the middle of that user's run, holding
	// its lease.
	select {
	case <-time.After(time.Until(inducedAt.Add(inducedRetryAfter))):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	killed := make(chan struct{})
	c.fake.setOnQuery(func(caller, user string) { c.killCaller(caller, user, killed) })
	select {
	case <-killed:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a query to kill its instance: %w", ctx.Err())
	}
	if err := c.wave(ctx, 2, func(t *Task, round int) {
		if round == 0 && t.Priority == 2 {
			t.Priority = 0 // the second task goes first
		}
		if round == 1 && t.Priority == 1 {
			t.Estimate = 5
		}
	}); err != nil {
		return nil, err
	}
	if err := c.waitDone(ctx); err != nil {
		return nil, err
	}
	stopped := c.stopAll(ctx)
	return c.report(start, inducedAt, stopped), nil
}

// start starts the instances, all at once, and waits until each serves.
func (c *cluster) start(ctx context.Context, apiURL string) error {
	a := c.cfg.App
	args := []string{"-api-url", apiURL, "-redis", c.cfg.RedisURL, "-redis-prefix", c.cfg.Prefix,
		"-listen", "127.0.0.1:0", "-secret", string(a.Secret),
		"-rate", fmt.Sprint(a.Rate), "-burst", fmt.Sprint(a.Burst), "-workers", fmt.Sprint(max(a.Workers, 1)),
		"-debounce", a.Debounce.String(), "-max-wait", a.MaxWait.String(), "-lease", a.LeaseTTL.String()}
	c.insts = make([]*instance, c.cfg.Instances)
	errs := make([]error, c.cfg.Instances)
	var wg sync.WaitGroup
	for n := range c.insts {
		wg.Go(func() {
			c.insts[n], errs[n] = startInstance(ctx, c.cfg.Command, fmt.Sprintf("i%d", n+1), args, c.cfg.Logs)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// wave makes rounds of edits, each round one edit of every user's tasks
// that change applies to, a few milliseconds apart, each announced by a
// webhook.
func (c *cluster) wave(ctx context.Context, rounds int, change func(t *Task, round int)) error {
	for round := range rounds {
		for _, u := range clusterUsers {
			for _, id := range []string{u + "-1", u + "-2"} {
				before := c.fake.userTasks(u)
				c.fake.edit(id, func(t *Task) { change(t, round) })
				if slices.Equal(before, c.fake.userTasks(u)) {
					continue
				}
				if err := c.send(ctx, u, id); err != nil {
					return err
				}
			}
		}
		time.Sleep(c.cfg.App.Debounce / 10)
	}
	return nil
}

// send posts one event to the next instance in turn, as a load balancer
// would: when an instance does not answer, it marks it down and sends the
// event to the next one.
func (c *cluster) send(ctx context.Context, user, task string) error {
	c.mu.Lock()
	c.seq++
	id := fmt.Sprintf("ev%03d", c.seq)
	c.mu.Unlock()
	body, err := json.Marshal(Event{ID: id, Type: "task.updated", TaskID: task, Assignee: user})
	if err != nil {
		return err
	}
	sig := hookhttp.Sign(c.cfg.App.Secret, body)
	for range len(c.insts) {
		in := c.nextUp()
		if in == nil {
			break
		}
		status, err := hookhttp.PostJSON(c.hc, in.webhook)(ctx, body, sig)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.mu.Lock()
			c.down[in.name] = true
			c.resent++
			c.mu.Unlock()
			continue
		}
		if status != http.StatusAccepted {
			return fmt.Errorf("%s answered event %s with %d", in.name, id, status)
		}
		c.mu.Lock()
		c.accepted[id] = user
		c.byInst[in.name]++
		c.mu.Unlock()
		return nil
	}
	return fmt.Errorf("no instance took event %s", id)
}

// nextUp returns the next instance not marked down, in turn, or nil.
func (c *cluster) nextUp() *instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range c.insts {
		in := c.insts[c.next%len(c.insts)]
		c.next++
		if !c.down[in.name] {
			return in
		}
	}
	return nil
}

// killCaller kills, once, the instance whose request the fake API is
// answering: caller is its User-Agent, with its pid.
func (c *cluster) killCaller(caller, user string, killed chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.killed != nil {
		return
	}
	for _, in := range c.insts {
		if caller == userAgentOf(in.pid()) {
			if err := in.kill(); err != nil {
				return
			}
			c.killed, c.killedAt, c.victim = in, time.Now(), user
			close(killed)
			return
		}
	}
}

// waitDone waits until every event answered 202 was in a finished
// recompute and no user is pending, queued or in a run anywhere. The work
// is in other processes: this one can only look, every 100 ms.
func (c *cluster) waitDone(ctx context.Context) error {
	for {
		if c.missing() == 0 {
			idle, err := c.idle(ctx)
			if err != nil {
				return err
			}
			if idle {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for every event to be recomputed (%d missing): %w", c.missing(), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// missing counts the events answered 202 that no recompute took in yet.
func (c *cluster) missing() int {
	done := c.recomputed()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for id := range c.accepted {
		if _, ok := done[id]; !ok {
			n++
		}
	}
	return n
}

// recomputed returns the events each finished recompute logged, by ID,
// with the instance that logged it.
func (c *cluster) recomputed() map[string]string {
	done := map[string]string{}
	for _, in := range c.insts {
		for _, r := range parseRecomputes(in.log.String()) {
			for _, id := range r.ids {
				done[id] = in.name
			}
		}
	}
	return done
}

// idle asks an instance still running for the Runner's stats, which with
// a shared store cover every instance.
func (c *cluster) idle(ctx context.Context) (bool, error) {
	for _, in := range c.insts {
		if in == c.killedInstance() || in.exited() {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.webhook[:len(in.webhook)-len("/webhook")]+"/stats", nil)
		if err != nil {
			return false, err
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return false, err
		}
		var s struct{ Runner pacer.Stats }
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			return false, fmt.Errorf("%s /stats: %w", in.name, err)
		}
		return statsIdle(s.Runner), nil
	}
	return false, errors.New("no instance left to ask")
}

func (c *cluster) killedInstance() *instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// stopAll stops the instances that were not killed with SIGTERM and
// returns how each exited.
func (c *cluster) stopAll(ctx context.Context) map[string]error {
	out := map[string]error{}
	for _, in := range c.insts {
		if in == c.killedInstance() {
			continue
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out[in.name] = in.stop(stopCtx)
		cancel()
	}
	return out
}

// killAll kills every instance still running and waits for them all.
func (c *cluster) killAll() {
	for _, in := range c.insts {
		if in == nil {
			continue
		}
		if !in.exited() && in.cmd.Process != nil {
			_ = in.kill()
		}
		<-in.done
	}
}

// recomputedLine is how an instance logs a finished recompute (see
// pipeline.handle): its user, then, after other attributes, the IDs of the
// events it took in.
var recomputedLine = regexp.MustCompile(`msg=recomputed user=(\S+) .*? ids=("(?:[^"\\]|\\.)*"|\S*)`)

// A recompute is one "recomputed" line of an instance's log.
type recompute struct {
	user string
	ids  []string
}

// parseRecomputes finds the recomputes in an instance's log.
func parseRecomputes(log string) []recompute {
	var out []recompute
	for _, m := range recomputedLine.FindAllStringSubmatch(log, -1) {
		ids, err := strconv.Unquote(m[2])
		if err != nil {
			ids = m[2]
		}
		r := recompute{user: m[1]}
		if ids != "" {
			r.ids = strings.Split(ids, ",")
		}
		out = append(out, r)
	}
	return out
}

// dialRedis connects to the Redis at url and checks that it answers.
func dialRedis(ctx context.Context, url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", url, err)
	}
	return rdb, nil
}

// deletePrefix deletes every key whose name starts with "{prefix:", as the
// store's and the bucket's keys do: what a run left.
func deletePrefix(ctx context.Context, rdb *redis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, "{"+prefix+":*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	// One key at a time: keys of different hash slots cannot go in one
	// DEL on a cluster.
	for _, k := range keys {
		if err := rdb.Del(ctx, k).Err(); err != nil {
			return err
		}
	}
	return nil
}

// The fake task API's hooks for the cluster demo.

// allowSlack lets requests arrive up to slack earlier than their slot,
// instead of gcraSlack: for clients whose requests travel unevenly.
func (f *fakeAPI) allowSlack(slack time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limit = newGCRA(f.rate, f.burst, slack, f.now())
}

// callLog returns every request answered so far, in order of arrival.
func (f *fakeAPI) callLog() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// A clusterAPI is the fake task API with the multi-instance demo's hooks in
// front of it: one request answered 429 whatever the budget, as a real API
// does when other clients spent its limit (see throttleCall), and a hook
// that sees each task query the API accepted before its answer leaves (see
// setOnQuery).
type clusterAPI struct {
	*fakeAPI

	mu          sync.Mutex
	requests    int // so far, the induced 429 included
	throttleAt  int
	throttleFor time.Duration
	throttled   chan time.Time
	induced     int // requests answered 429 because told to
	onQuery     func(caller, user string)
}

// throttleCall makes the API answer its nth request (counting from 1,
// all requests so far included) 429 with Retry-After d, in whole seconds,
// whatever its budget, and without it reaching the fake API. It returns a
// channel that receives the time of that answer.
func (a *clusterAPI) throttleCall(n int, d time.Duration) <-chan time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.throttleAt, a.throttleFor = n, d
	a.throttled = make(chan time.Time, 1)
	return a.throttled
}

// setOnQuery sets the hook called with each accepted task query, before
// its answer is sent.
func (a *clusterAPI) setOnQuery(fn func(caller, user string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onQuery = fn
}

func (a *clusterAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests++
	if a.requests == a.throttleAt {
		a.induced++
		a.throttled <- a.now()
		a.mu.Unlock()
		status, body := retryAfter(w, a.throttleFor)
		writeJSON(w, status, body)
		return
	}
	onQuery := a.onQuery
	a.mu.Unlock()
	if onQuery == nil || r.URL.Path != "/v1/tasks/query" {
		a.fakeAPI.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	a.fakeAPI.ServeHTTP(rec, r)
	var q struct{ Assignee string }
	if rec.Code == http.StatusOK && json.Unmarshal(body, &q) == nil {
		onQuery(r.UserAgent(), q.Assignee)
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// inducedCount returns how many requests were answered 429 because told to.
func (a *clusterAPI) inducedCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.induced
}
