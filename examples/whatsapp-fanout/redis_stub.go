//go:build !redisdraft

package main

import (
	"context"
	"errors"
	"time"
)

func openShared(context.Context, string, string, time.Duration, float64, int) (*shared, func() error, error) {
	return nil, nil, errors.New("-redis: not built yet")
}
