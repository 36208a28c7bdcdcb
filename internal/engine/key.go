package engine

import "github.com/pacerkit/pacer/store"

// KeyState is what one key is doing in an engine, read at about one
// instant, and whether the engine's queue is paused: what Engine.Key
// returns.
type KeyState struct {
	// Info is the key's state in the terms of the store contract
	// (store.KeyInfo). Info.Key is the key as stored, "" for the engine
	// in the process, which stores keys as they are.
	Info store.KeyInfo
	// Found reports that the key holds values or is paused; Info is zero
	// otherwise, but for Info.Key.
	Found bool
	// QueuePaused reports that an operator paused the engine's queue
	// (store.Stats.Paused); false for an engine whose queue cannot be
	// paused.
	QueuePaused bool
}
