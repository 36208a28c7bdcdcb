package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// blockPrefix is what starts a block of each type in Markdown; the title
// is the only level-1 heading.
var blockPrefix = map[string]string{"heading_1": "## ", "heading_2": "### ", "heading_3": "#### ", "bulleted_list_item": "- "}

// markdown converts p to a Markdown document with a small front matter.
// Consecutive list items form one list; numbered items count up within it.
func markdown(p page) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: %s\ntitle: %q\nversion: %d\nlast_edited: %s\n---\n\n# %s\n",
		p.ID, p.Title, p.Version, p.LastEdited.UTC().Format(time.RFC3339), p.Title)
	prev, n := "", 0
	for _, bl := range p.Blocks {
		list := bl.Type == "bulleted_list_item" || bl.Type == "numbered_list_item" || bl.Type == "to_do"
		if !(list && prev == bl.Type) {
			b.WriteString("\n") // a blank line between blocks, none inside a list
			n = 0
		}
		prev = bl.Type
		switch bl.Type {
		case "numbered_list_item":
			n++
			fmt.Fprintf(&b, "%d. %s\n", n, bl.Text)
		case "to_do":
			fmt.Fprintf(&b, "- [%s] %s\n", map[bool]string{true: "x", false: " "}[bl.Checked], bl.Text)
		case "code":
			fmt.Fprintf(&b, "```%s\n%s\n```\n", bl.Language, bl.Text)
		case "divider":
			b.WriteString("---\n")
		case "quote":
			fmt.Fprintf(&b, "> %s\n", strings.ReplaceAll(bl.Text, "\n", "\n> "))
		default: // paragraph, and anything this converter does not know, have no prefix
			fmt.Fprintf(&b, "%s%s\n", blockPrefix[bl.Type], bl.Text)
		}
	}
	return []byte(b.String())
}

// frontMatter reads the page id and version back from the front matter
// that markdown writes, and reports whether data has one.
func frontMatter(data []byte) (id string, version int, ok bool) {
	rest, found := strings.CutPrefix(string(data), "---\n")
	head, _, closed := strings.Cut(rest, "\n---\n")
	if !found || !closed {
		return "", 0, false
	}
	hasVersion := false
	for line := range strings.SplitSeq(head, "\n") {
		switch k, v, _ := strings.Cut(line, ": "); k {
		case "id":
			id = v
		case "version":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", 0, false
			}
			version, hasVersion = n, true
		}
	}
	return id, version, id != "" && hasVersion
}
