package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMarkdown(t *testing.T) {
	p := page{ID: "p1", Title: "Plan", Version: 2, LastEdited: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC), Blocks: []block{
		{Type: "heading_1", Text: "Goals"},
		{Type: "paragraph", Text: "Ship it."},
		{Type: "numbered_list_item", Text: "one"},
		{Type: "numbered_list_item", Text: "two"},
		{Type: "to_do", Text: "test", Checked: true},
		{Type: "to_do", Text: "release"},
		{Type: "quote", Text: "a\nb"},
		{Type: "code", Language: "go", Text: "x := 1"},
		{Type: "divider"},
	}}
	want := strings.Join([]string{
		"---", "id: p1", `title: "Plan"`, "version: 2", "last_edited: 2026-11-20T09:30:00Z", "---", "",
		"# Plan", "",
		"## Goals", "",
		"Ship it.", "",
		"1. one", "2. two", "",
		"- [x] test", "- [ ] release", "",
		"> a", "> b", "",
		"```go", "x := 1", "```", "",
		"---", "",
	}, "\n")
	require.Equal(t, want, string(markdown(p)))
}

func TestFrontMatterReadsWhatMarkdownWrites(t *testing.T) {
	id, version, ok := frontMatter(markdown(page{ID: "roadmap", Title: "a\n---\nversion: 9", Version: 12}))
	require.True(t, ok)
	require.Equal(t, "roadmap", id)
	require.Equal(t, 12, version, "a title cannot fake the version: markdown quotes it")
	for _, notOurs := range []string{"", "# README\n", "---\nid: x\n", "---\nid: x\nversion: two\n---\n", "---\nversion: 3\n---\n"} {
		_, _, ok := frontMatter([]byte(notOurs))
		require.False(t, ok, "%q", notOurs)
	}
}
