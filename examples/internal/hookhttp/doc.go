// Package hookhttp holds the HTTP plumbing that the webhook-fed example
// programs share: body signatures, a loopback server, and an in-process
// transport that lets their tests run on fake time. It is not part of
// pacer's API.
package hookhttp
