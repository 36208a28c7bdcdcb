// Package window provides daily delivery windows in a time zone.
//
// A Schedule says when work may run, e.g. "Mon-Fri 09:00-17:30
// Europe/Paris". Build one with Daily or Parse. Contains, NextOpen and EndAt
// answer for any instant without reading a clock; Wait blocks until the
// window opens and Context gives a context that ends, with cause ErrClosed,
// when the window closes.
package window
