package main

import (
	"cmp"
	"slices"
	"time"
)

// A Task is one item on a user's list as the task API stores it. Rank and
// Projected are the two fields this program computes and writes back.
type Task struct {
	ID       string `json:"id"`
	Assignee string `json:"assignee"`
	Title    string `json:"title"`
	Priority int    `json:"priority"`      // 1 is the most urgent
	Due      string `json:"due,omitempty"` // YYYY-MM-DD, empty when none
	Estimate int    `json:"estimate_days"` // business days of work, at least 1 counts
	Done     bool   `json:"done"`

	Rank      int    `json:"rank,omitempty"`      // 1 = next up; 0 when done
	Projected string `json:"projected,omitempty"` // YYYY-MM-DD completion, empty when done
}

// An Update is the part of a task this program writes back.
type Update struct {
	ID        string `json:"-"`
	Rank      int    `json:"rank"`
	Projected string `json:"projected"`
}

// plan ranks the open tasks (priority, then due date with undated last, then
// ID) and projects a completion date for each: work starts on the first
// business day at or after start and each task takes its estimate in business
// days after the previous one. Done tasks get rank 0 and no projection. The
// result holds one Update per task, in rank order with done tasks last.
func plan(tasks []Task, start time.Time) []Update {
	open := make([]Task, 0, len(tasks))
	var done []Task
	for _, t := range tasks {
		if t.Done {
			done = append(done, t)
		} else {
			open = append(open, t)
		}
	}
	slices.SortFunc(open, compareTasks)

	out := make([]Update, 0, len(tasks))
	day := firstBusinessDay(civilDate(start))
	for i, t := range open {
		end := addBusinessDays(day, max(t.Estimate, 1)-1)
		out = append(out, Update{ID: t.ID, Rank: i + 1, Projected: end.Format(dateLayout)})
		day = addBusinessDays(end, 1)
	}
	slices.SortFunc(done, func(a, b Task) int { return cmp.Compare(a.ID, b.ID) })
	for _, t := range done {
		out = append(out, Update{ID: t.ID})
	}
	return out
}

// compareTasks orders open tasks: lower priority number first, then earlier
// due date (a task without one comes after every dated task), then ID.
func compareTasks(a, b Task) int {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c
	}
	switch {
	case a.Due == b.Due:
	case a.Due == "":
		return 1
	case b.Due == "":
		return -1
	default:
		// YYYY-MM-DD compares correctly as a string.
		return cmp.Compare(a.Due, b.Due)
	}
	return cmp.Compare(a.ID, b.ID)
}

// changed returns the updates whose values differ from what the tasks
// already hold: the surgical write set.
func changed(tasks []Task, want []Update) []Update {
	have := make(map[string]Task, len(tasks))
	for _, t := range tasks {
		have[t.ID] = t
	}
	var out []Update
	for _, u := range want {
		if t := have[u.ID]; t.Rank != u.Rank || t.Projected != u.Projected {
			out = append(out, u)
		}
	}
	return out
}

// dateLayout is how task dates travel in JSON: a civil date, no time of day.
const dateLayout = time.DateOnly

// isBusinessDay reports whether d falls on Monday to Friday.
func isBusinessDay(d time.Time) bool {
	wd := d.Weekday()
	return wd != time.Saturday && wd != time.Sunday
}

// firstBusinessDay returns d when it is a business day, else the Monday after.
func firstBusinessDay(d time.Time) time.Time {
	for !isBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// addBusinessDays returns the business day n business days after d, skipping
// weekends; d itself is moved to a business day first. n must be >= 0.
func addBusinessDays(d time.Time, n int) time.Time {
	d = firstBusinessDay(d)
	for n > 0 {
		d = d.AddDate(0, 0, 1)
		if isBusinessDay(d) {
			n--
		}
	}
	return d
}

// civilDate drops the time of day of t, keeping its calendar date in t's location.
func civilDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
