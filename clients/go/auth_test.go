package leasehold_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"leasehold"
	"leasehold/internal/testserver"
)

// Against a server with a password: refused without one or with a wrong
// one (never retried), and a full session (RESP2 pool and RESP3 watch
// connection) with the right one.
func TestAuthentication(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte("long random password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, "--requirepass-file", pwFile)
	ctx := testCtx(t, 30*time.Second)
	if _, err := leasehold.Dial(ctx, srv.Endpoint(), nil); !errors.Is(err, leasehold.ErrAuthenticationRequired) {
		t.Fatalf("no password: %v", err)
	}
	if _, err := leasehold.Dial(ctx, srv.Endpoint(), &leasehold.Options{Password: "wrong"}); !errors.Is(err, leasehold.ErrAuthenticationFailed) {
		t.Fatalf("a wrong password: %v", err)
	}
	c := dial(t, srv, &leasehold.Options{Password: "long random password"})
	s := openSession(t, c, 5*time.Second)
	l, err := s.Lock(ctx, "auth", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The watch connection authenticated too: the revoke push arrives.
	if err := c.Revoke(ctx, "auth"); err != nil {
		t.Fatal(err)
	}
	testserver.Receive(t, l.Lost(), 10*time.Second, "the revoke push over an authenticated watch connection")
}

// A tls:// endpoint with a CA file: the same session over TLS; an
// untrusted certificate is refused as ErrInvalidArgument.
func TestTLS(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed (scripts/install-deps.sh installs it)")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=leasehold test CA")
	run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
	if err := os.WriteFile(filepath.Join(dir, "san.ext"), []byte("subjectAltName=IP:127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext")
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out", "other.crt", "-days", "2", "-subj", "/CN=someone else")

	tlsPort := testserver.FreePort(t)
	srv := testserver.Start(t, "--tls-listen", "127.0.0.1:"+itoa(tlsPort),
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-auth-clients", "no")
	endpoint := "tls://127.0.0.1:" + itoa(tlsPort)
	ctx := testCtx(t, 30*time.Second)
	var c *leasehold.Client
	testserver.Require(t, 10*time.Second, "the TLS listener answers", func() bool {
		c, err = leasehold.Dial(ctx, endpoint, &leasehold.Options{TLSCAFile: filepath.Join(dir, "ca.crt")})
		return err == nil
	})
	defer c.Close()
	s := openSession(t, c, 5*time.Second)
	l, err := s.Lock(ctx, "tls", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Revoke(ctx, "tls"); err != nil {
		t.Fatal(err)
	}
	testserver.Receive(t, l.Lost(), 10*time.Second, "the revoke push over TLS")
	_, err = leasehold.Dial(ctx, endpoint, &leasehold.Options{TLSCAFile: filepath.Join(dir, "other.crt")})
	if !errors.Is(err, leasehold.ErrInvalidArgument) {
		t.Fatalf("an untrusted certificate: %v", err)
	}
	_ = srv
}
