package main

import "time"

// A page is a Notion page as the page API returns it, reduced to what the
// sync needs: a title and a flat list of blocks.
type page struct {
	ID         string    `json:"id"`
	Title      string    `json:"title"`
	Version    int       `json:"version"`
	LastEdited time.Time `json:"last_edited_time"`
	Blocks     []block   `json:"blocks"`
}

// A block is one paragraph-level element of a page.
type block struct {
	Type     string `json:"type"` // heading_1..3, paragraph, bulleted_list_item, numbered_list_item, to_do, quote, code, divider
	Text     string `json:"text,omitempty"`
	Checked  bool   `json:"checked,omitempty"`  // to_do
	Language string `json:"language,omitempty"` // code
}
