// Package leasehold is the Go client of leasehold, a lock service for
// correctness locks: sessions that keep themselves alive and announce their
// loss, locks with fencing tokens and FIFO waits, fenced writes and leader
// election. It has the contract of the C++ and Python clients
// (docs/client.md, docs/python.md); the wire protocol is docs/protocol.md.
//
//	client, err := leasehold.Dial(ctx, "127.0.0.1:7379", nil)
//	session, err := client.NewSession(ctx, 10*time.Second)
//	lock, err := session.Lock(ctx, "jobs/billing", &leasehold.LockOptions{Wait: time.Minute})
//	defer lock.Unlock(ctx)
//	_, err = lock.Put(ctx, "jobs/billing/cursor", []byte("42")) // refused once stale
//	select {
//	case <-lock.Lost(): // stop the work: lock.Err() says why
//	case <-done:
//	}
//
// Errors are *Error (or *LostError) values; test them with errors.Is
// against ErrStaleToken, ErrLost, ErrTimedOut and the other Err* kinds.
//
// Command connections speak RESP2 through redigo (Debian's
// golang-github-gomodule-redigo-dev); each session's keepalive connection
// speaks RESP3 (a small codec here) to receive the server's loss pushes.
// docs/go.md is the manual.
package leasehold
