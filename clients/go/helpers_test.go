package leasehold_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"leasehold"
	"leasehold/internal/testserver"
)

// testCtx is a context bounded by the test's own limit: no call of a test
// can hang past it.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testserver.Scaled(d))
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, srv *testserver.Server, opts *leasehold.Options) *leasehold.Client {
	t.Helper()
	if opts == nil {
		opts = &leasehold.Options{CallTimeout: 2 * time.Second, ConnectTimeout: 500 * time.Millisecond}
	}
	c, err := leasehold.Dial(testCtx(t, 10*time.Second), srv.Endpoint(), opts)
	if err != nil {
		t.Fatalf("Dial %s: %v", srv.Endpoint(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func openSession(t *testing.T, c *leasehold.Client, ttl time.Duration, opts ...leasehold.SessionOption) *leasehold.Session {
	t.Helper()
	s, err := c.NewSession(testCtx(t, 10*time.Second), ttl, opts...)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
