package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// partKey is the idempotency key of part k of a reminder for one group: the
// same in every attempt and every run, so a gateway that honours it
// delivers the part once even when it is sent again — after a retry whose
// first attempt did arrive, or after a restart that lost the record of a
// part the gateway had accepted. It is a hash of the reminder's id, the
// group and the part's index, so any id fits in an HTTP header.
func partKey(reminderID, group string, k int) string {
	h := sha256.New()
	for _, s := range []string{reminderID, group, strconv.Itoa(k)} {
		// Length-prefixed, so that no two triples share a key.
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
