package main

// shared is what several instances of the program share (-redis): the
// account locks and buckets, and the progress of every reminder.
type shared struct {
	locks    accountLocks
	limits   accountLimits
	progress backend
}
