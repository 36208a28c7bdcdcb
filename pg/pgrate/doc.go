// Package pgrate is a rate limit shared by every instance of a service
// that runs on PostgreSQL.
package pgrate
