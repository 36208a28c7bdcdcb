package main

import (
	"encoding/json"
	"time"
)

// An Event is something that happened in the publishing application, e.g.
// an order was paid. It is delivered to every subscription that matches
// its Type.
type Event struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// A message is one event on its way to one subscription. Seq numbers a
// subscription's messages 1, 2, 3... in publish order. Its fields are
// exported: with -postgres the Runners store it JSON-encoded.
type message struct {
	Sub       string    `json:"sub"`
	Seq       uint64    `json:"seq"`
	Event     Event     `json:"event"`
	Published time.Time `json:"published"`
}

// A delivery is the body POSTed to a subscription's URL. Sequence lets the
// receiver check the order.
type delivery struct {
	Subscription string `json:"subscription"`
	Sequence     uint64 `json:"sequence"`
	Event        Event  `json:"event"`
}
