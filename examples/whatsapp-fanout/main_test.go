package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBuilt()
		os.Exit(code)
	}))
}

// TestDemo plays the demo on fake time: the evening run pauses at the
// windows' close, the next morning's run is interrupted, and the run after
// it resumes from the state file to success (and partial for the account
// with refusing groups).
func TestDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The demo's settings (demoFlags), on 200 groups at a fifth of the
		// rate: the window closes after 150 of 400 messages. With 6
		// attempts no group fails for good at this failure rate.
		cfg := config{State: filepath.Join(t.TempDir(), "state.json"), Rate: 6000, Burst: 5, Parallel: 3, Attempts: 6,
			Backoff: 2 * time.Millisecond, Jitter: [2]time.Duration{time.Millisecond, 3 * time.Millisecond}}
		const groups = 200
		var out strings.Builder
		rep, err := demo(t.Context(), cfg, groups, 0.02, &out)
		require.NoError(t, err)
		t.Log("\n" + out.String())
		require.True(t, rep.OK(), out.String())
		require.Len(t, rep.Runs, 3)
		for i, want := range [][2]string{{statusPaused, statusPaused}, {statusInterrupted, statusInterrupted}, {statusSuccess, statusPartial}} {
			for j, x := range rep.Runs[i] {
				require.Equal(t, want[j], x.Status, "run %d, %s", i, x.ID)
			}
		}
		// Each run prepared each account's media once, if it sent any, as
		// the service saw it.
		for _, a := range []string{"acct-berlin", "acct-london"} {
			prevPrep, prevSent := 0, 0
			for i, s := range rep.Seen {
				prep, sent := s.Prepared[a]-prevPrep, s.MediaSent[a]-prevSent
				prevPrep, prevSent = s.Prepared[a], s.MediaSent[a]
				require.LessOrEqual(t, prep, 1, "%s, run %d", a, i)
				require.True(t, sent == 0 || prep == 1, "%s, run %d: %d media messages, %d preparations", a, i, sent, prep)
			}
		}
		london := rep.Runs[2][1].Tally
		require.Equal(t, demoRefuse, london.Skipped)
		require.Equal(t, groups-demoRefuse, london.Sent)
		require.Contains(t, out.String(), "all checks held")
	})
}

// setup is a small fan-out on fake time: one reminder per account, the
// clock at the given wall time in Europe/Berlin on Monday 23 November 2026.
type setup struct {
	cfg  config
	fake *fakeWhatsApp
	clk  *shiftedClock
}

func newSetup(t *testing.T, hhmmss string, groups int, accounts ...string) *setup {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at, err := time.ParseInLocation("2006-01-02 15:04:05", "2026-11-23 "+hhmmss, berlin)
	require.NoError(t, err)
	clk := clockAt(at)
	s := &setup{clk: clk, fake: newFakeWhatsApp(clk, 0, [2]time.Duration{50 * time.Millisecond, 150 * time.Millisecond}, nil)}
	s.cfg = config{
		State: filepath.Join(t.TempDir(), "state.json"),
		Rate:  600, Burst: 1, Parallel: 3, Attempts: 3, Backoff: time.Second,
		Jitter: [2]time.Duration{100 * time.Millisecond, 300 * time.Millisecond},
		Clock:  clk, Sender: s.fake, SaveEvery: time.Second,
	}
	for _, a := range accounts {
		s.cfg.Reminders = append(s.cfg.Reminders, testReminder(a, a, groups))
	}
	return s
}

func testReminder(id, account string, groups int) reminder {
	r := reminder{ID: id, Account: account, Zone: "Europe/Berlin", Window: "06:00-18:00",
		Parts: []part{{Text: "hello"}, {Media: "flyer.jpg"}}}
	for i := range groups {
		r.Groups = append(r.Groups, fmt.Sprintf("%s-g%03d", account, i))
	}
	return r
}

func (s *setup) run(t *testing.T) []result {
	t.Helper()
	rep, err := run(t.Context(), s.cfg, io.Discard)
	require.NoError(t, err)
	s.cfg.Reminders = nil
	return rep
}

// The four final statuses of DESIGN section 5, each from a run.
func TestStatusRules(t *testing.T) {
	cases := []struct {
		name    string
		at      string  // Berlin wall time of the run
		fail    float64 // fake failure rate
		refuse  int     // groups that refuse
		want    string
		sent    int // groups sent, -1: between 1 and all-1
		closed  bool
		nextRun string // status after one more run at the same time
	}{
		{name: "success: every target sent", at: "10:00:00", want: statusSuccess, sent: 20, nextRun: statusSuccess},
		{name: "paused: the window closed with targets pending", at: "17:59:57", want: statusPaused, sent: -1, closed: true, nextRun: statusPaused},
		{name: "partial: all attempted, some skipped", at: "10:00:00", refuse: 2, want: statusPartial, sent: 18, nextRun: statusPartial},
		{name: "failed: every send failed", at: "10:00:00", fail: 1, want: statusFailed, sent: 0, nextRun: statusFailed},
		{name: "failed: fired after the window closed", at: "18:30:00", want: statusFailed, sent: 0, closed: true, nextRun: statusFailed},
		{name: "failed: fired before the window opened", at: "05:00:00", want: statusFailed, sent: 0, closed: true, nextRun: statusFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSetup(t, c.at, 20, "acct")
				s.fake.failRate = c.fail
				for _, g := range s.cfg.Reminders[0].Groups[:c.refuse] {
					s.fake.refuse[g] = true
				}
				x := s.run(t)[0]
				require.Equal(t, c.want, x.Status)
				require.Equal(t, c.closed, x.Closed)
				if c.sent >= 0 {
					require.Equal(t, c.sent, x.Tally.Sent)
				} else {
					require.Positive(t, x.Tally.Sent)
					require.Less(t, x.Tally.Sent, x.Tally.Targets)
				}
				require.Equal(t, x.Tally.Sent+x.Tally.Failed+x.Tally.Skipped+x.Tally.Pending, x.Tally.Targets)
				p, err := loadProgress(s.cfg.State)
				require.NoError(t, err)
				require.Equal(t, c.want, p.Reminders[0].Status, "the state file has the status")

				attempts := len(s.fake.snapshot().Attempts)
				y := s.run(t)[0]
				require.Equal(t, c.nextRun, y.Status)
				if final(c.want) {
					require.True(t, y.Already)
					require.Len(t, s.fake.snapshot().Attempts, attempts, "a final reminder sends nothing more")
				}
			})
		})
	}
}

// The status rules as a table of tallies.
func TestResolveStatus(t *testing.T) {
	cases := []struct {
		t      tally
		closed bool
		want   string
	}{
		{tally{Targets: 3, Sent: 3, PartsSent: 6}, false, statusSuccess},
		{tally{Targets: 3, Sent: 3, PartsSent: 6}, true, statusSuccess},
		{tally{Targets: 3, Sent: 1, Pending: 2, PartsSent: 3}, true, statusPaused},
		{tally{Targets: 3, Sent: 0, Pending: 3, PartsSent: 1}, true, statusPaused},
		{tally{Targets: 3, Sent: 1, Pending: 2, PartsSent: 2}, false, ""},
		{tally{Targets: 3, Sent: 2, Failed: 1, PartsSent: 5}, false, statusPartial},
		{tally{Targets: 3, Sent: 2, Skipped: 1, PartsSent: 4}, false, statusPartial},
		{tally{Targets: 3, Failed: 2, Skipped: 1, PartsSent: 1}, false, statusPartial},
		{tally{Targets: 3, Failed: 3}, false, statusFailed},
		{tally{Targets: 3, Pending: 3}, true, statusFailed},
		{tally{Targets: 3, Failed: 1, Pending: 2}, true, statusFailed},
		{tally{}, false, statusSuccess},
	}
	for _, c := range cases {
		require.Equal(t, c.want, resolveStatus(c.t, c.closed), "%+v closed=%v", c.t, c.closed)
	}
}

// A paused run resumes the next morning with only the pending groups, under
// the same limits, and media is prepared once per run.
func TestPauseThenResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, "17:59:50", 60, "acct")
		first := s.run(t)[0]
		require.Equal(t, statusPaused, first.Status)
		require.True(t, first.Closed)
		require.Equal(t, 1, first.Media)
		at1 := s.fake.snapshot()
		// 10 s at 10 msgs/s with a burst of 1: at most 101 messages.
		require.LessOrEqual(t, len(at1.Attempts), 101)
		sent := first.Tally.Sent
		require.Positive(t, sent)

		next := first.NextOpen
		berlin, _ := time.LoadLocation("Europe/Berlin")
		require.Equal(t, time.Date(2026, 11, 24, 6, 0, 0, 0, berlin), next)
		s.clk.Jump(next)
		second := s.run(t)[0]
		require.Equal(t, statusSuccess, second.Status)
		require.Equal(t, int64(2*60-first.Tally.PartsSent), second.SentNow, "only what was pending")
		at2 := s.fake.snapshot()
		require.Equal(t, 2, at2.Prepared["acct"], "once per run")
		for g, ds := range at2.Delivered {
			require.Equal(t, []int{0, 1}, parts(ds), g)
		}
	})
}

func parts(ds []delivery) []int {
	var p []int
	for _, d := range ds {
		p = append(p, d.Part)
	}
	return p
}

// A program killed mid-run starts again from its state file: groups the
// file says are sent are not sent again; the others finish, parts in order.
// The parts accepted after the file's last write are sent a second time,
// with the same idempotency keys, so the service suppresses them: each part
// is delivered once, and the run reports the duplicates suppressed.
func TestRestartFromStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, "10:00:00", 60, "acct")
		ctx, cancel := context.WithCancel(t.Context())
		var snapshot []byte
		var wg sync.WaitGroup
		wg.Go(func() {
			// The state file as a kill at this instant would leave it.
			time.Sleep(4500 * time.Millisecond)
			b, err := os.ReadFile(s.cfg.State)
			require.NoError(t, err)
			snapshot = b
			time.Sleep(200 * time.Millisecond)
			cancel()
		})
		_, err := run(ctx, s.cfg, io.Discard)
		require.NoError(t, err)
		wg.Wait()
		before := s.fake.snapshot()
		require.NoError(t, os.WriteFile(s.cfg.State, snapshot, 0o600))
		saved, err := loadProgress(s.cfg.State)
		require.NoError(t, err)
		require.Equal(t, statusRunning, saved.Reminders[0].Status)

		s.cfg.Reminders = nil
		x := s.run(t)[0]
		require.Equal(t, statusSuccess, x.Status)
		after := s.fake.snapshot()
		resent := 0
		for _, g := range saved.Reminders[0].Groups {
			key := "acct/" + g.ID
			require.Equal(t, []int{0, 1}, parts(after.Delivered[key]), "%s: each part once, in order", key)
			if g.Status == groupPending {
				// Resumed at the part the file recorded: the parts
				// accepted after its last write go out again.
				resent += len(before.Delivered[key]) - g.Parts
			}
		}
		require.Positive(t, resent, "the snapshot was taken between two writes")
		require.Equal(t, resent, after.Dups["acct"], "the service suppressed every part sent again")
		require.Equal(t, int64(resent), x.Duplicates, "the run reports them")
		t.Logf("parts sent again after the restart, suppressed by the service: %d", resent)
	})
}

// One fan-out per account at a time: two reminders of one account run one
// after the other, while another account runs alongside.
func TestOneFanOutPerAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, "10:00:00", 10, "a")
		s.cfg.Reminders = append(s.cfg.Reminders, testReminder("a2", "a", 10), testReminder("b", "b", 10))
		s.cfg.Reminders[1].Groups = slices.Clone(s.cfg.Reminders[1].Groups)
		for i := range s.cfg.Reminders[1].Groups {
			s.cfg.Reminders[1].Groups[i] = fmt.Sprintf("a2-g%03d", i)
		}
		rep := s.run(t)
		for _, x := range rep {
			require.Equal(t, statusSuccess, x.Status, x.ID)
		}
		byID := map[string]result{}
		for _, x := range rep {
			byID[x.ID] = x
		}
		a, a2, b := byID["a"], byID["a2"], byID["b"]
		require.True(t, !a.Start.Before(a2.End) || !a2.Start.Before(a.End), "the two fan-outs of account a do not overlap")
		first := a
		if a2.Start.Before(a.Start) {
			first = a2
		}
		require.True(t, b.Start.Before(first.End) && first.Start.Before(b.End), "account b runs alongside account a")
	})
}

// The HTTP sender speaks the gateway protocol and sorts its answers into
// success, retry-after, permanent and transient errors.
func TestHTTPSender(t *testing.T) {
	var mu sync.Mutex
	var got []message
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/media" {
			fmt.Fprint(w, `{"handle":"h1"}`)
			return
		}
		var m message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.Key = r.Header.Get("Idempotency-Key")
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		switch m.Group {
		case "again":
			w.Header().Set("Idempotent-Replayed", "true")
		case "busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		case "gone":
			http.Error(w, "not a member", http.StatusForbidden)
		case "flaky":
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	s := &httpSender{client: srv.Client(), base: srv.URL, token: "tok"}
	ctx := t.Context()

	h, err := s.PrepareMedia(ctx, "a", "flyer.jpg")
	require.NoError(t, err)
	require.Equal(t, "h1", h)
	sent := message{Account: "a", Group: "ok", Part: 1, Media: h, Key: partKey("r1", "ok", 1)}
	dup, err := s.Send(ctx, sent)
	require.NoError(t, err)
	require.False(t, dup)
	dup, err = s.Send(ctx, message{Account: "a", Group: "again", Key: "k"})
	require.NoError(t, err)
	require.True(t, dup, "Idempotent-Replayed: the gateway suppressed a duplicate")

	_, err = s.Send(ctx, message{Account: "a", Group: "busy"})
	var ra *retryAfterError
	require.ErrorAs(t, err, &ra)
	require.Equal(t, 7*time.Second, ra.wait)

	_, err = s.Send(ctx, message{Account: "a", Group: "gone"})
	require.True(t, isPermanent(err))
	_, err = s.Send(ctx, message{Account: "a", Group: "flaky"})
	require.Error(t, err)
	require.False(t, isPermanent(err))

	bad := &httpSender{client: srv.Client(), base: srv.URL, token: "wrong"}
	_, err = bad.Send(ctx, message{Account: "a", Group: "ok"})
	require.True(t, isPermanent(err))
	require.Equal(t, sent, got[0], "the key goes in the Idempotency-Key header")
	require.Len(t, sent.Key, 32)
}

// An idempotency key is the same for the same part of the same reminder
// to the same group, and differs as soon as one of the three does.
func TestPartKey(t *testing.T) {
	require.Equal(t, partKey("r", "g", 0), partKey("r", "g", 0))
	keys := map[string]bool{}
	for _, k := range [][3]string{{"r", "g", "0"}, {"r", "g", "1"}, {"r", "h", "0"}, {"s", "g", "0"}, {"r1", "", "0"}, {"r", "1", "0"}, {"", "r1", "0"}} {
		n := int(k[2][0] - '0')
		keys[partKey(k[0], k[1], n)] = true
	}
	require.Len(t, keys, 7)
}
