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

const dateLayout = time.DateOnly // task dates in JSON: a civil date, no time of day

// plan ranks the open tasks (priority, then due date with undated last, then
// ID) and projects a completion date for each: work starts on the first
// business day at or after start and each task takes its estimate in business
// days after the previous one. Done tasks get rank 0 and no projection. The
// result holds one Update per task, in rank order with done tasks last.
func plan(tasks []Task, start time.Time) []Update {
	open := slices.DeleteFunc(slices.Clone(tasks), func(t Task) bool { return t.Done })
	slices.SortFunc(open, func(a, b Task) int {
		// "~" sorts after every date: undated tasks come last.
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(cmp.Or(a.Due, "~"), cmp.Or(b.Due, "~")), cmp.Compare(a.ID, b.ID))
	})
	out := make([]Update, 0, len(tasks))
	y, m, d := start.Date()
	day := addBusinessDays(time.Date(y, m, d, 0, 0, 0, 0, time.UTC), 0)
	for i, t := range open {
		end := addBusinessDays(day, max(t.Estimate, 1)-1)
		out = append(out, Update{ID: t.ID, Rank: i + 1, Projected: end.Format(dateLayout)})
		day = addBusinessDays(end, 1)
	}
	var done []string
	for _, t := range tasks {
		if t.Done {
			done = append(done, t.ID)
		}
	}
	slices.Sort(done)
	for _, id := range done {
		out = append(out, Update{ID: id})
	}
	return out
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

// addBusinessDays returns the business day (Monday to Friday) n business
// days after d; d itself is moved to the next business day first. n must
// be >= 0.
func addBusinessDays(d time.Time, n int) time.Time {
	for {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			if n == 0 {
				return d
			}
			n--
		}
		d = d.AddDate(0, 0, 1)
	}
}
