package main

import (
	"fmt"
	"strings"
	"time"
)

// demoToday is the day every plan starts in the demo: a Friday, so the
// projections visibly skip a weekend.
const demoToday = "2026-11-20"

// demoUsers are the assignees the fake API knows; demoStrangers are not:
// their runs fail with a permanent 404 and are dropped.
var (
	demoUsers     = []string{"alice", "bob", "carol", "dave"}
	demoStrangers = []string{"mallory"}
)

func demoTasks() []Task {
	return []Task{
		{ID: "a1", Assignee: "alice", Title: "Fix login timeout", Priority: 2, Due: "2026-11-27", Estimate: 2},
		{ID: "a2", Assignee: "alice", Title: "Write release notes", Priority: 3, Estimate: 1},
		{ID: "a3", Assignee: "alice", Title: "Review billing PR", Priority: 2, Estimate: 1},
		{ID: "a4", Assignee: "alice", Title: "Rotate API keys", Priority: 1, Due: "2026-11-24", Estimate: 1},
		{ID: "b1", Assignee: "bob", Title: "Migrate search index", Priority: 1, Estimate: 3},
		{ID: "b2", Assignee: "bob", Title: "Update onboarding doc", Priority: 3, Estimate: 1},
		{ID: "b3", Assignee: "bob", Title: "Patch CVE in parser", Priority: 2, Due: "2026-11-25", Estimate: 1},
		{ID: "c1", Assignee: "carol", Title: "Design review", Priority: 2, Estimate: 2},
		{ID: "c2", Assignee: "carol", Title: "Quarterly report", Priority: 1, Due: "2026-12-01", Estimate: 3},
		{ID: "c3", Assignee: "carol", Title: "Hire backend engineer", Priority: 2, Due: "2026-12-10", Estimate: 5},
		{ID: "d1", Assignee: "dave", Title: "Load test checkout", Priority: 1, Estimate: 1},
		{ID: "d2", Assignee: "dave", Title: "Tune database indexes", Priority: 2, Estimate: 2},
	}
}

// An edit is one change a person makes to a task in the fake API, as in its
// UI; the demo then announces it with a webhook, as the real service does.
type edit struct {
	task   string
	change func(*Task)
}

func setPriority(p int) func(*Task) { return func(t *Task) { t.Priority = p } }
func setDue(d string) func(*Task)   { return func(t *Task) { t.Due = d } }
func setEstimate(n int) func(*Task) { return func(t *Task) { t.Estimate = n } }
func markDone() func(*Task)         { return func(t *Task) { t.Done = true } }

// burstEdits are the quick edits of the first burst, per user, made in
// rounds: everyone's first edit, then everyone's second, and so on.
var burstEdits = map[string][]edit{
	"alice": {{"a1", setPriority(1)}, {"a3", setDue("2026-11-23")}, {"a2", setEstimate(2)}, {"a4", markDone()}, {"a1", setEstimate(3)}},
	"bob":   {{"b2", setPriority(2)}, {"b3", setEstimate(2)}, {"b1", setDue("2026-12-04")}, {"b3", setPriority(1)}},
	"carol": {{"c1", setPriority(1)}, {"c3", setEstimate(4)}, {"c2", setDue("2026-11-30")}},
}

// duringRunEdit is made while bob's first run is in progress: bob must run
// again afterwards.
var duringRunEdit = edit{"b2", setPriority(1)}

// badRequests are malformed webhook requests and the status each must get.
var badRequests = []struct {
	name, body string
	sign       bool // sign the body with the secret
	status     int
}{
	{"bad signature", `{"type":"task.updated","task_id":"a1","assignee":"alice"}`, false, 401},
	{"bad JSON", `{"type":`, true, 400},
	{"body over 1 MiB", `{"type":"task.updated","pad":"` + strings.Repeat("x", maxBody) + `"}`, true, 413},
}

func eventBody(typ, task, assignee string) []byte {
	return fmt.Appendf(nil, `{"type":%q,"task_id":%q,"assignee":%q}`, typ, task, assignee)
}

// newDemoAPI returns the fake task API loaded with the demo's tasks; its
// budget starts spent and carol's first query fails.
func newDemoAPI(rate float64, burst int, now func() time.Time) *fakeAPI {
	f := newFakeAPI(rate, burst, true, now)
	for _, t := range demoTasks() {
		f.put(t)
	}
	f.failQuery["carol"] = 1
	return f
}
