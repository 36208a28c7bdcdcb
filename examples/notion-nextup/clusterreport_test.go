package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// A clusterReport is what the multi-instance demo saw and the checks it
// made.
type clusterReport struct {
	cfg       clusterConfig
	took      time.Duration
	instances []instanceReport
	accepted  int      // events answered 202
	missing   []string // events answered 202 that no finished recompute took in: "ID (user)"
	resent    int      // events sent again after an instance did not answer
	api       apiStats
	induced   int // requests answered 429 because the API was told to
	calls     []apiCall

	// The induced 429, as times from its answer.
	inducedAt   time.Duration // from the start
	grace       time.Duration // requests given their slot before the pause may still go out until then
	early, held int           // calls before the grace ended, and after it until the pause's end
	resumed     time.Duration // first call after the pause's end, from that end; -1 if none

	// The kill.
	killed     string        // the instance killed
	killedAt   time.Duration // from the start
	victim     string        // the user whose run it was in
	rerunBy    string        // the instance that queried the victim next
	rerunAfter time.Duration // from the kill; -1 if never

	wrongPlans []string         // users whose final tasks do not match their plan
	stopped    map[string]error // how the instances left exited on SIGTERM

	checks checks
}

// An instanceReport is one instance's share.
type instanceReport struct {
	name       string
	pid        int
	events     int // events it answered 202
	recomputes int // finished recomputes in its log
	calls      int // task API requests it made
}

// report gathers what the cluster saw and runs the checks.
// Times are from start, when the demo began.
func (c *cluster) report(start, inducedAt time.Time, stopped map[string]error) *clusterReport {
	r := &clusterReport{cfg: c.cfg, took: time.Since(start), api: c.fake.snapshot(), induced: c.fake.inducedCount(), calls: c.fake.callLog(), stopped: stopped}
	done := c.recomputed()
	c.mu.Lock()
	defer c.mu.Unlock()
	r.accepted, r.resent = len(c.accepted), c.resent
	for id, user := range c.accepted {
		if _, ok := done[id]; !ok {
			r.missing = append(r.missing, id+" ("+user+")")
		}
	}
	slices.Sort(r.missing)
	callers := map[string]string{}
	for _, in := range c.insts {
		ir := instanceReport{name: in.name, pid: in.pid(), events: c.byInst[in.name], recomputes: len(parseRecomputes(in.log.String()))}
		callers[userAgentOf(in.pid())] = in.name
		for _, call := range r.calls {
			if call.Caller == userAgentOf(in.pid()) {
				ir.calls++
			}
		}
		r.instances = append(r.instances, ir)
	}
	a := c.cfg.App
	r.inducedAt = inducedAt.Sub(start)
	r.grace = pauseGrace(c.cfg.Instances, max(a.Workers, 1), a.Rate)
	r.resumed = -1
	end := inducedAt.Add(inducedRetryAfter)
	for _, call := range r.calls {
		switch at := call.At; {
		case !at.After(inducedAt):
		case at.Before(inducedAt.Add(r.grace)):
			r.early++
		case at.Before(end):
			r.held++
		case r.resumed < 0:
			r.resumed = at.Sub(end)
		}
	}

	r.rerunAfter = -1
	if c.killed != nil {
		r.killed, r.killedAt, r.victim = c.killed.name, c.killedAt.Sub(start), c.victim
		for _, call := range r.calls {
			if call.Query && call.User == c.victim && call.At.After(c.killedAt) && call.Status == 200 {
				r.rerunBy, r.rerunAfter = callers[call.Caller], call.At.Sub(c.killedAt)
				break
			}
		}
	}
	today := time.Now()
	for _, u := range clusterUsers {
		tasks := c.fake.userTasks(u)
		if len(changed(tasks, plan(tasks, today))) > 0 {
			r.wrongPlans = append(r.wrongPlans, u)
		}
	}
	r.checks = r.runChecks()
	return r
}

// pauseGrace is how long after a 429 requests may still arrive: each
// worker of each instance may hold a turn the shared bucket gave it before
// the pause, one every 1/rate; each may then arrive up to clusterJitter
// late.
func pauseGrace(instances, workers int, rate float64) time.Duration {
	return time.Duration(float64(instances*workers)/rate*float64(time.Second)) + clusterJitter
}

func (r *clusterReport) runChecks() checks {
	everyInstance := true
	for _, in := range r.instances {
		everyInstance = everyInstance && in.events > 0
	}
	var stopErrs []error
	for _, err := range r.stopped {
		stopErrs = append(stopErrs, err)
	}
	lease := r.cfg.App.LeaseTTL
	return checks{
		{fmt.Sprintf("every event answered 202 was in a finished recompute (%d of %d)", r.accepted-len(r.missing), r.accepted), r.accepted > 0 && len(r.missing) == 0},
		{"the webhook stream was spread over every instance", everyInstance},
		{"no user processed twice at once anywhere: every request carried its run's fence, none behind its user's newest", r.api.Calls > 0 && r.api.Unfenced == 0 && r.api.Stale == 0},
		{"no 429 after warm-up, across all instances", r.api.ThrottledWarm == 0},
		{fmt.Sprintf("the induced 429 held every instance: no call from %v after it to its end (%v), calls resumed within 1s", r.grace.Round(10*time.Millisecond), inducedRetryAfter),
			r.held == 0 && r.resumed >= 0 && r.resumed < time.Second},
		{fmt.Sprintf("the killed instance lost nothing: %s's run went on elsewhere once its lease (%v) lapsed", cmp.Or(r.victim, "its user"), lease),
			r.killed != "" && r.rerunBy != "" && r.rerunBy != r.killed && r.rerunAfter >= lease/2},
		{"every user's ranks and projected dates match their final tasks", len(r.wrongPlans) == 0},
		{"the instances left stopped cleanly on SIGTERM", len(r.stopped) == len(r.instances)-1 && errors.Join(stopErrs...) == nil},
	}
}

func (r *clusterReport) print(w io.Writer) {
	var b strings.Builder
	a := r.cfg.App
	ms := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	fmt.Fprintf(&b, "%d instances, debounce %v, max-wait %v, lease %v, %d worker(s) each\n", len(r.instances), a.Debounce, a.MaxWait, a.LeaseTTL, max(a.Workers, 1))
	for _, in := range r.instances {
		fmt.Fprintf(&b, "  %-3s pid %-7d %2d events, %2d recomputes, %2d API calls", in.name, in.pid, in.events, in.recomputes, in.calls)
		if in.name == r.killed {
			fmt.Fprintf(&b, "; killed with SIGKILL at %v, in %s's run", ms(r.killedAt), r.victim)
		}
		if err, ok := r.stopped[in.name]; ok {
			if err != nil {
				fmt.Fprintf(&b, "; stopped: %v", err)
			} else {
				b.WriteString("; stopped on SIGTERM")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "webhooks: %d events answered 202, sent to the instances in turn; %d sent again after an instance stopped answering\n", r.accepted, r.resent)
	if len(r.missing) > 0 {
		fmt.Fprintf(&b, "events in no recompute: %s\n", strings.Join(r.missing, ", "))
	}
	s := r.api
	fmt.Fprintf(&b, "task API (%g req/s, burst %d, all callers together): %d calls (%d queries, %d updates), 429s: %d induced, %d from the limit (%d after warm-up), %d stale, %d unfenced\n",
		a.Rate, a.Burst, s.Calls+r.induced, s.Queries, s.Updates, r.induced, s.Throttled, s.ThrottledWarm, s.Stale, s.Unfenced)
	fmt.Fprintf(&b, "request rate: peak %d in 1 s, sustained %.2f/s\n", s.Peak, s.Sustained)
	fmt.Fprintf(&b, "induced 429 at %v (Retry-After %v): %d calls in the next %v (turns given before the pause), %d from then to its end",
		ms(r.inducedAt), inducedRetryAfter, r.early, ms(r.grace), r.held)
	if r.resumed >= 0 {
		fmt.Fprintf(&b, ", the next %v after it", r.resumed.Round(time.Millisecond))
	}
	b.WriteString("\n")
	if r.killed != "" {
		fmt.Fprintf(&b, "%s, in a run on %s when it was killed: queried again", r.victim, r.killed)
		if r.rerunAfter >= 0 {
			fmt.Fprintf(&b, " by %s %v later", r.rerunBy, ms(r.rerunAfter))
		} else {
			b.WriteString(" never")
		}
		b.WriteString("\n")
	}
	if len(r.wrongPlans) > 0 {
		fmt.Fprintf(&b, "users whose tasks do not match their plan: %s\n", strings.Join(r.wrongPlans, ", "))
	}
	r.checks.write(&b)
	fmt.Fprintf(&b, "took %v\n", ms(r.took))
	io.WriteString(w, b.String())
}
