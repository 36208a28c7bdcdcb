package redisstore

import "github.com/pacerkit/pacer/store"

var _ store.PerKeyClaimer = (*Store)(nil)

// ClaimsPerKey implements store.PerKeyClaimer: a Store honours
// ClaimParams.PerKey. A key stays as cheap as ever until a Claim with
// PerKey > 1 leases it: it then keeps its batches in its hash (see
// lua/lib_perkey.lua), and its Claim, Finish and Extend cost O(PerKey)
// more, a Finish of a batch behind the first O(values before it) more.
func (s *Store) ClaimsPerKey() bool { return true }
