// Package hookhttp holds the HTTP plumbing that the webhook-fed example
// programs share: body signatures and a loopback server. It is not part of
// pacer's API.
package hookhttp
