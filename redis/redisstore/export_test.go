package redisstore

import "strconv"

// AddCommand returns the command of an Add of val to key of queue, with a
// Wait of wait microseconds (0: ready at once), for a measurement that
// fills a queue through a pipeline: Store.Add waits for each reply.
func AddCommand(prefix, queue, key string, val []byte, wait int64) []any {
	q := newQueue(prefix, queue)
	params := "1"
	if wait > 0 {
		params = "1 " + strconv.FormatInt(wait, 10) + " 0"
	}
	return []any{"fcall", addFn, len(q.add), q.add[0], q.add[1], q.add[2], "0", params, key, val}
}

// QueuePrefix returns the prefix of the names of queue's keys in a Store
// with Config.Prefix prefix, for a measurement that runs the library's
// code on them in a script of its own.
func QueuePrefix(prefix, queue string) string { return newQueue(prefix, queue).prefix }
