// leasehold-go-lock holds a leasehold lock for as long as its stdin stays
// open: it acquires NAME, prints the fencing token as one line on stdout,
// then holds the lock until stdin closes (EOF) or SIGINT / SIGTERM / SIGHUP
// arrives, and releases it. Made for tests and scripts that drive a holder
// from another language (docs/go.md).
//
// Usage: leasehold-go-lock [options] NAME
//
// Exit codes (as `leasehold lock`, docs/client.md): 0 released; 64 usage or
// refused credentials; 69 no server reachable; 75 not acquired within
// --wait; 76 the lock was lost while held (a line "lost: ..." on stderr);
// 1 any other refusal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"leasehold"
)

const (
	exitUsage       = 64
	exitUnavailable = 69
	exitTempFail    = 75
	exitLost        = 76
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("leasehold-go-lock", flag.ContinueOnError)
	endpoints := fs.String("endpoints", envOr("LEASEHOLD_ENDPOINTS", "127.0.0.1:7379"), "host:port[,host:port...] (tls://host:port for TLS)")
	ttl := fs.Duration("ttl", 10*time.Second, "session TTL: how soon the lock frees if this process dies")
	wait := fs.String("wait", "30s", "how long to wait in the queue: a duration, 0 (try once) or 'forever'")
	shared := fs.Bool("shared", false, "reader mode")
	limit := fs.Int("limit", 0, "semaphore of N permits")
	owner := fs.String("owner", fmt.Sprintf("leasehold-go-lock pid %d", os.Getpid()), "session owner label")
	user := fs.String("user", os.Getenv("LEASEHOLD_USER"), "user name (AUTH)")
	passwordFile := fs.String("password-file", "", "file holding the password (or $LEASEHOLD_PASSWORD)")
	caFile := fs.String("tls-ca-file", os.Getenv("LEASEHOLD_TLS_CA_FILE"), "CA certificates (PEM) for tls:// endpoints")
	timeout := fs.Duration("timeout", 3*time.Second, "one call's timeout")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: leasehold-go-lock [options] NAME\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "leasehold-go-lock: give exactly one lock NAME")
		return exitUsage
	}
	name := fs.Arg(0)
	waitFor, err := parseWait(*wait)
	if err != nil {
		fmt.Fprintf(os.Stderr, "leasehold-go-lock: --wait: %v\n", err)
		return exitUsage
	}
	password := os.Getenv("LEASEHOLD_PASSWORD")
	if *passwordFile != "" {
		b, err := os.ReadFile(*passwordFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "leasehold-go-lock: --password-file: %v\n", err)
			return exitUsage
		}
		password = strings.TrimRight(string(b), "\r\n")
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	client, err := leasehold.Dial(ctx, *endpoints, &leasehold.Options{User: *user, Password: password,
		TLSCAFile: *caFile, CallTimeout: *timeout, Name: "leasehold-go-lock"})
	if err != nil {
		return fail(err)
	}
	defer client.Close()
	session, err := client.NewSession(ctx, *ttl, leasehold.WithOwner(*owner))
	if err != nil {
		return fail(err)
	}
	defer session.Close(context.Background())
	lock, err := session.Lock(ctx, name, &leasehold.LockOptions{Shared: *shared, Limit: *limit, Wait: waitFor})
	if err != nil {
		return fail(err)
	}
	fmt.Println(lock.Token())

	stdinClosed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-lock.Lost():
		fmt.Fprintf(os.Stderr, "lost: %v\n", lock.Err())
		return exitLost
	case <-stdinClosed:
	case <-ctx.Done():
	}
	release, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := lock.Unlock(release); err != nil {
		if errors.Is(err, leasehold.ErrLost) {
			fmt.Fprintf(os.Stderr, "lost: %v\n", err)
			return exitLost
		}
		return fail(err)
	}
	return 0
}

func parseWait(text string) (time.Duration, error) {
	if text == "forever" {
		return leasehold.WaitForever, nil
	}
	if text == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("'%s' is not a duration (examples: 0, 500ms, 10s, forever)", text)
	}
	return d, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// fail prints err as one line and maps it to an exit code.
func fail(err error) int {
	fmt.Fprintf(os.Stderr, "leasehold-go-lock: %v\n", err)
	switch {
	case errors.Is(err, leasehold.ErrWouldBlock), errors.Is(err, leasehold.ErrTimedOut):
		return exitTempFail
	case errors.Is(err, leasehold.ErrLost):
		return exitLost
	case errors.Is(err, leasehold.ErrInvalidArgument), errors.Is(err, leasehold.ErrAuthenticationFailed),
		errors.Is(err, leasehold.ErrAuthenticationRequired):
		return exitUsage
	case errors.Is(err, leasehold.ErrUnreachable), errors.Is(err, context.Canceled):
		return exitUnavailable
	}
	return 1
}
