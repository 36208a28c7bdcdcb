package pgstore

import (
	"strings"
	"testing"
)

// The claim statements without a KeyRate neither read nor write
// key_rates, and each has a rated form that does: a Claim without a
// KeyRate runs the statements it ran before migration 015.
func TestClaimsWithoutKeyRateKeepTheirStatements(t *testing.T) {
	q := newQueries(`"s"`)
	tq := newTenantQueries(`"s"`, q)
	for name, pair := range map[string][2]string{
		"claim":                      {q.claim, q.claimRated},
		"claim, shared":              {q.claimShared, q.claimSharedRated},
		"tenants":                    {tq.claim, tq.claimRated},
		"tenants, shared":            {tq.claimShared, tq.claimSharedRated},
		"without a tenant":           {tq.claimNone, tq.claimNoneRated},
		"lanes":                      {q.claimLanes, q.claimLanesRated},
		"lanes, shared":              {q.claimLanesShared, q.claimLanesSharedRated},
		"lanes with tenants":         {q.claimLanesFair, q.claimLanesFairRated},
		"lanes with tenants, shared": {q.claimLanesFairShared, q.claimLanesFairSharedRated},
	} {
		if strings.Contains(pair[0], "key_rates") || strings.Contains(pair[0], "_rated(") {
			t.Errorf("%s: the statement without a KeyRate reads the rates", name)
		}
		if !strings.Contains(pair[1], "key_rates") && !strings.Contains(pair[1], "_rated(") {
			t.Errorf("%s: the rated statement keeps no rate", name)
		}
	}
}
