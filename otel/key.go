package pacerotel

import (
	"fmt"
	"strconv"
)

// keyString returns key as the value of the pacer.key attribute: strings
// as they are, integers in decimal, a fmt.Stringer by its String, anything
// else as fmt.Sprint prints it.
func keyString[K comparable](key K) string {
	switch k := any(key).(type) {
	case string:
		return k
	case int:
		return strconv.Itoa(k)
	case int64:
		return strconv.FormatInt(k, 10)
	case int32:
		return strconv.FormatInt(int64(k), 10)
	case uint:
		return strconv.FormatUint(uint64(k), 10)
	case uint64:
		return strconv.FormatUint(k, 10)
	case uint32:
		return strconv.FormatUint(uint64(k), 10)
	case fmt.Stringer:
		return k.String()
	}
	return fmt.Sprint(key)
}
