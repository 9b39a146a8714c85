package leasehold

import (
	"context"
	"testing"
	"time"

	"leasehold/internal/testserver"
)

// role is the first word of ROLE's reply ("primary" / "standby"), "" when
// the node does not answer.
func role(ctx context.Context, endpoint string) string {
	c, err := Dial(ctx, endpoint, &Options{CallTimeout: time.Second})
	if err != nil {
		return ""
	}
	defer c.Close()
	reply, err := c.call(ctx, callSpec{}, "ROLE")
	if err != nil {
		return ""
	}
	items, ok := reply.([]interface{})
	if !ok || len(items) == 0 {
		return ""
	}
	return asText(items[0])
}

// A client given only a standby's address follows its -REDIRECT to the
// primary, for the command connections and for the session's watch
// connection (the revoke push arrives).
func TestRedirectFromAStandbyToThePrimary(t *testing.T) {
	etcd := testserver.StartEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), testserver.Scaled(90*time.Second))
	defer cancel()
	flags := []string{"--etcd", etcd, "--cluster", "gotest", "--etcd-lease-ttl", "2"}
	primary := testserver.Start(t, flags...)
	testserver.Require(t, 30*time.Second, "the first node is primary", func() bool {
		return role(ctx, primary.Endpoint()) == "primary"
	})
	standby := testserver.Start(t, flags...)
	testserver.Require(t, 30*time.Second, "the second node is a standby", func() bool {
		return role(ctx, standby.Endpoint()) == "standby"
	})

	c, err := Dial(ctx, standby.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("NewSession through a standby: %v", err)
	}
	defer s.Close(ctx)
	if got := c.CurrentEndpoint(); got != primary.Endpoint() {
		t.Fatalf("the session was opened on %s; want the primary %s", got, primary.Endpoint())
	}
	l, err := s.Lock(ctx, "redirected", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := s.SafeDeadline()
	testserver.Require(t, 20*time.Second, "keepalives acknowledged by the primary", func() bool {
		return s.SafeDeadline().After(first)
	})
	if err := c.Revoke(ctx, "redirected"); err != nil {
		t.Fatal(err)
	}
	testserver.Receive(t, l.Lost(), 10*time.Second, "the revoke push on the redirected watch connection")
}
