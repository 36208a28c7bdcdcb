package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

func TestOverviewRefreshesLive(t *testing.T) {
	s := open(t)
	s.seed()
	s.run(chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS("table.queues")))
	assert.Equal(t, []string{"emails", "reports", "webhooks"}, s.texts("#queue-rows td.name a"))
	emails := s.texts("#queue-rows tr:first-child td")
	require.Len(t, emails, 11)
	assert.Equal(t, []string{"47", "47", "43", "1", "1", "1", "1", "0", "0"}, emails[1:10], "keys, values, ready, leased, retrying, held, debouncing, paused keys, dead")
	assert.Regexp(t, `^\d+m ago$`, emails[10], "the age of the oldest ready value")
	s.shot("overview")

	// A queue that comes while the page is open shows up by itself.
	s.add("sms", "+15550100", 0, "your code is 1234")
	s.wait(`Array.from(document.querySelectorAll('#queue-rows td.name a')).some(a => a.textContent === 'sms')`)
	assert.Equal(t, []string{"emails", "reports", "sms", "webhooks"}, s.texts("#queue-rows td.name a"))
	assert.Equal(t, "live", s.text("#live"))
}

func TestFilterKeysAndOpenAKey(t *testing.T) {
	s := open(t)
	s.seed()
	s.run(chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS("table.queues")),
		chromedp.Click(chromedp.Search(`//td[@class="name"]/a[text()="emails"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.keys")))
	assert.Len(t, s.texts("table.keys tbody tr"), 47, "the first page holds them all")
	s.shot("queue")

	// The state filter.
	s.run(chromedp.SetValue(chromedp.CSS(`select[name="state"]`), "held"),
		chromedp.Click(chromedp.CSS(`form.filter button`)),
		chromedp.WaitVisible(chromedp.CSS(`a.clear`)))
	assert.Equal(t, []string{"tenant-17/invoice-2042"}, s.texts("table.keys td.key"))
	assert.Equal(t, []string{"held"}, s.texts("table.keys td.state"))

	// The prefix search, on any state.
	s.run(chromedp.SetValue(chromedp.CSS(`select[name="state"]`), ""),
		chromedp.SendKeys(chromedp.CSS(`input[name="prefix"]`), "tenant-17/"),
		chromedp.Submit(chromedp.CSS(`input[name="prefix"]`)))
	s.wait(`location.search.includes('prefix=tenant-17') && document.readyState === 'complete'`)
	assert.Equal(t, []string{"tenant-17/invoice-2041", "tenant-17/invoice-2042", "tenant-17/reminder"}, s.texts("table.keys td.key"))
	assert.Equal(t, []string{"retrying", "held", "debouncing"}, s.texts("table.keys td.state"))
	s.shot("queue-filtered")

	// A key's page.
	s.run(chromedp.Click(chromedp.Search(`//td[@class="key"]/a[.//text()="tenant-17/invoice-2041"]`)),
		chromedp.WaitVisible(chromedp.CSS("section.explain")))
	assert.Equal(t, "tenant-17/invoice-2041", s.text("h1.keytitle"))
	assert.Contains(t, s.text("section.explain"), `key "tenant-17/invoice-2041" is retrying`)
	assert.Contains(t, s.text(".errbox"), "smtp: 451 4.7.1 try again later")
	assert.Contains(t, s.text("table.values"), `"to": "billing@example.com"`)
	s.shot("key")
}

func TestKeyOfBytesAndText(t *testing.T) {
	s := open(t)
	s.seed()
	s.run(chromedp.Navigate(s.url("/queue?queue=emails&prefix=tenant-")), chromedp.WaitVisible(chromedp.CSS("table.keys")),
		chromedp.Click(chromedp.Search(`//td[@class="key"]/a[.//text()="tenant-5/digest"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.values")))
	assert.Contains(t, s.text("table.values .vkind"), "hex")
	assert.Contains(t, s.text("table.values pre"), "1f 8b 08 00")
	s.shot("key-bytes")
}

func TestPauseAndResumeAQueue(t *testing.T) {
	s := open(t)
	s.seed()
	s.run(chromedp.Navigate(s.url("/queue?queue=emails")), chromedp.WaitVisible(chromedp.CSS("table.keys")),
		chromedp.Click(chromedp.CSS(`a[data-action="pause-queue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)))
	assert.Equal(t, "Pause queue?", s.text("h1"))
	s.shot("confirm-pause")
	s.run(chromedp.Click(chromedp.CSS(`#confirm`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	assert.Equal(t, `Paused queue "emails".`, s.text(".flash"))
	assert.Equal(t, "paused", s.text("h1 .badge"))
	st, err := s.mem.Stats(context.Background(), "emails")
	require.NoError(t, err)
	assert.True(t, st.Paused)
	s.shot("queue-paused")

	s.run(chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS("table.queues")))
	assert.Equal(t, "emails paused", s.texts("#queue-rows td.name")[0], "the overview shows the pause")
	s.shot("overview-paused")

	s.run(chromedp.Navigate(s.url("/queue?queue=emails")), chromedp.WaitVisible(chromedp.CSS("table.keys")),
		chromedp.Click(chromedp.CSS(`a[data-action="resume-queue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
		chromedp.Click(chromedp.CSS(`#confirm`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	assert.Equal(t, `Resumed queue "emails".`, s.text(".flash"))
	assert.Empty(t, s.texts("h1 .badge"))
	st, err = s.mem.Stats(context.Background(), "emails")
	require.NoError(t, err)
	assert.False(t, st.Paused)
	assert.Equal(t, []console.Action{{Kind: console.PauseQueue, Queue: "emails"}, {Kind: console.ResumeQueue, Queue: "emails"}}, s.acts)
}

func TestRedriveADeadLetter(t *testing.T) {
	s := open(t)
	s.seed()
	s.clk.Add(2 * time.Hour)
	s.run(chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS("table.queues")),
		chromedp.Click(chromedp.Search(`//tr[td/a[text()="webhooks"]]//a[@class="c-dead"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.dead")))
	assert.Equal(t, []string{"acme.example/orders", "globex.example/hooks"}, s.texts("table.dead td.key"))
	assert.Contains(t, s.texts("table.dead td.err")[0], "410 Gone")
	assert.Contains(t, s.texts("table.dead td.vals")[0], `"event": "order.paid"`)
	s.shot("dead")

	s.run(chromedp.Click(chromedp.Search(`//tr[td/a//text()="acme.example/orders"]//a[@data-action="redrive"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)))
	s.shot("confirm-redrive")
	s.run(chromedp.Click(chromedp.CSS(`#confirm`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	assert.Equal(t, "Redrove dead letter 1.", s.text(".flash"))
	assert.Equal(t, []string{"globex.example/hooks"}, s.texts("table.dead td.key"))
	s.shot("dead-redriven")

	vals, err := s.mem.Values(context.Background(), "webhooks", "acme.example/orders", 10)
	require.NoError(t, err)
	require.Len(t, vals, 2)
	assert.Equal(t, `{"event":"order.created","id":"ord_1"}`, string(vals[0].Value))
	info, ok, err := s.mem.Key(context.Background(), "webhooks", "acme.example/orders")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, store.Ready, info.State)
}
