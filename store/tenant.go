package store

import "fmt"

// MaxWeight is the largest AddParams.Weight.
const MaxWeight = 1_000_000

// FairTenants is implemented by engines that lease ready keys in turns
// across tenants (AddParams.Tenant and Weight), in proportion to the
// tenants' weights, as Fairness in the package doc says, across every
// process that shares the queue. Choosing the tenant of a Claim costs
// O(log T) in the T tenants with ready keys, on top of the O(log K) of
// choosing a key: no Claim visits every tenant.
type FairTenants interface {
	// FairTenants marks the engine; it does nothing.
	FairTenants()
}

// ValidateTenant returns an error naming the field of p's Tenant and
// Weight that no engine takes. Engines call it in Add.
func ValidateTenant(p AddParams) error {
	switch {
	case p.Weight < 0 || p.Weight > MaxWeight:
		return fmt.Errorf("store: AddParams.Weight must be from 0 to %d, got %d", MaxWeight, p.Weight)
	case p.Weight > 0 && p.Tenant == "":
		return fmt.Errorf("store: AddParams.Weight %d needs a Tenant", p.Weight)
	}
	return nil
}
