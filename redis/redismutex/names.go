package redismutex

import "github.com/pacerkit/pacer/redis/internal/redisname"

// names are the Redis names of the locks of one Prefix and Name, in the
// name encoding (see the package doc).
type names struct {
	prefix   string // "{Prefix:lock:Name}:", which every name starts with
	fence    string // the counter of the Name's fences
	released string // the channel of releases that someone waits for
}

func newNames(prefix, name string) names {
	p := redisname.KeyPrefix(prefix, "lock", name)
	return names{prefix: p, fence: p + "fence", released: p + "released"}
}

// lockKey returns the name of key's lock.
func (n names) lockKey(key string) string { return n.prefix + "k:" + key }
