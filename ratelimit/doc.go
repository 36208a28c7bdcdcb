// Package ratelimit paces calls to remote APIs: token buckets that obey
// Retry-After, one bucket per key, limiters combined, and an
// http.RoundTripper that waits, pauses and retries.
package ratelimit
