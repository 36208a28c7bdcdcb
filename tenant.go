package pacer

import (
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// validateTenant checks Config.Tenant and TenantWeight.
func (c Config[K, V]) validateTenant() error {
	switch {
	case c.TenantWeight != nil && c.Tenant == nil:
		return fmt.Errorf("pacer: Config.TenantWeight needs Config.Tenant")
	case c.Tenant != nil && c.Store != nil:
		if _, ok := c.Store.(store.FairTenants); !ok {
			return fmt.Errorf("pacer: Config.Tenant needs a Config.Store that implements store.FairTenants, which %T does not", c.Store)
		}
	}
	return nil
}

// tenantWeight returns c.TenantWeight(tenant) in [1, store.MaxWeight], and
// 0 without TenantWeight, which leaves the tenant's weight as it is.
func (c Config[K, V]) tenantWeight(tenant string) int {
	if c.TenantWeight == nil {
		return 0
	}
	return min(max(c.TenantWeight(tenant), 1), store.MaxWeight)
}

// tenantOf returns the tenant and weight of key for the engine, nil
// without Config.Tenant.
func (c Config[K, V]) tenantOf() func(K) (string, int) {
	if c.Tenant == nil {
		return nil
	}
	return func(key K) (string, int) {
		t := c.Tenant(key)
		if t == "" {
			return "", 0 // no tenant, which has no weight
		}
		return t, c.tenantWeight(t)
	}
}
